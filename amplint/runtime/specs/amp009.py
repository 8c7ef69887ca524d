"""AMP009 partial-loss-scaling: an unscaled auxiliary backward is divided by the scale (probe i4)."""

from ..signs import LossHarm, ScaledBy
from ..spec import Spec

SPEC = Spec(
    code="AMP009",
    signs=(
        LossHarm("aux_loss"),
        ScaledBy("grad", -1),
    ),
)
