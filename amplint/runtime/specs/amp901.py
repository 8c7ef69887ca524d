"""AMP901 scaler-with-bf16: loss scaling is exact in bfloat16, so the scaler changes no number but
still runs its inf checks and scale updates every step: dead weight, measured as both."""

from ..signs import HARM, AllOf, ExtraWork, Identical
from ..spec import Spec

SPEC = Spec(
    code="AMP901",
    record_ops=True,
    fp16=False,
    signs=(
        AllOf(ExtraWork(), Identical(), kind=HARM),
        ExtraWork(),
    ),
    context="dead weight",
)
