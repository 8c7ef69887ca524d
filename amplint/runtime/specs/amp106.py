"""AMP106 fp16-backward-without-scaler: unscaled fp16 gradients of a small loss underflow (probe e)."""

from ..signs import LossHarm, ZeroGrads
from ..spec import Spec

SPEC = Spec(
    code="AMP106",
    optimizer="adam",  # the fixture's documented optimizer; Adam still trains on what survives
    signs=(
        LossHarm(),
        ZeroGrads(),
    ),
    context="with Adam",
)
