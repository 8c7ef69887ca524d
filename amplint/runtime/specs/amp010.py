"""AMP010 grad-penalty-not-unscaled: a penalty from scaled gradients is scale (norm) or scale**2
(squared norm) times too large and swamps the loss."""

from ..signs import HARM, LossHarm, ScaledBy
from ..spec import Spec

SPEC = Spec(
    code="AMP010",
    signs=(
        ScaledBy("series", +1, powers=(1, 2), kind=HARM),  # the penalty, measured on identical parameters
        LossHarm(),
    ),
)
