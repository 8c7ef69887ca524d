"""AMP106 fp16-backward-without-scaler: unscaled fp16 gradients of a small loss underflow (probe e)."""

from ..spec import Spec, zero_grads

SPEC = Spec(
    code="AMP106",
    optimizer="adam",  # the fixture's documented optimizer; Adam still trains on what survives
    check=zero_grads(min_ratio=100.0, min_fraction=0.3),
    evidence="without a GradScaler {bad_zero} of the gradient entries the optimizer saw were exactly zero, "
             "vs {good_zero} with one; with Adam the final loss was {bad_loss} vs {good_loss} "
             "(start {first_loss}).",
)
