"""AMP004 unscaled-backward-with-scaler: with no ``scale()`` the first ``scaler.step`` raises; once a
scale exists, the step divides unscaled gradients by it (probe m) and fp16 gradients underflow."""

from ..signs import LossHarm, Raises, ScaledBy, ZeroGrads
from ..spec import Spec

SPEC = Spec(
    code="AMP004",
    signs=(
        Raises(("AssertionError", "_scale is None")),
        LossHarm(),
        ScaledBy("update", -1),
        ScaledBy("grad", -1),
        ZeroGrads(),
    ),
)
