"""AMP014 fp16-params-with-scaler: the gradients of a ``.half()`` model cannot be unscaled (section 2.3)."""

from ..signs import Raises
from ..spec import Spec

SPEC = Spec(
    code="AMP014",
    signs=(Raises(("ValueError", "Attempting to unscale FP16 gradients")),),
)
