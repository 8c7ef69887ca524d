"""AMP001 step-without-update: without ``update()`` the next step raises; a scaler built anew every
iteration (or a disabled one) never adapts its scale and, after an overflow, skips every step."""

from ..signs import LossHarm, Raises, ScaleFrozen, SkippedMore
from ..spec import Spec

SPEC = Spec(
    code="AMP001",
    signs=(
        # update() is the only way back to READY: the next step, or an unscale_ before it, raises
        Raises(("RuntimeError", "step() has already been called since the last update()"),
               ("RuntimeError", "unscale_() is being called after step()")),
        SkippedMore(),
        LossHarm(),
        ScaleFrozen(),
    ),
)
