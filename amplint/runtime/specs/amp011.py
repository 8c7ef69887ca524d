"""AMP011 scaler-step-closure: ``closure=`` raises with an enabled scaler; a positional closure is not
checked and its scaled backward makes the update scale x too large (probe h)."""

from ..signs import LossHarm, Raises, ScaledBy
from ..spec import Spec

SPEC = Spec(
    code="AMP011",
    signs=(
        Raises(("RuntimeError", "Closure use is not currently supported")),
        LossHarm(),
        ScaledBy("update", +1),
    ),
)
