"""AMP014 fp16-params-with-scaler: a ``.half()`` model's gradients cannot be unscaled (§2.3)."""

from ..spec import Spec, raises

SPEC = Spec(
    code="AMP014",
    optimizer="sgd",
    check=raises("ValueError", "Attempting to unscale FP16 gradients", good_must_train=True),
    evidence="bad.py raised {exception_md} at its first step; good.py (fp32 parameters, autocast) trained "
             "{good_steps} steps (loss {good_first_loss} -> {good_final_loss}).",
)
