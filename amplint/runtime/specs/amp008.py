"""AMP008 scaler-created-in-loop: the scale restarts every iteration and never backs off, so an
overflowing initial scale skips every step (probe a)."""

from ..signs import LossHarm, ScaleFrozen, SkippedMore
from ..spec import Spec

SPEC = Spec(
    code="AMP008",
    signs=(
        SkippedMore(),
        LossHarm(),
        ScaleFrozen(),
    ),
)
