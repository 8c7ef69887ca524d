"""AMP011 scaler-step-closure: ``scaler.step(opt, closure=...)`` raises when the scaler is enabled."""

from ..spec import Spec, raises

SPEC = Spec(
    code="AMP011",
    optimizer="sgd",
    check=raises("RuntimeError", "Closure use is not currently supported", good_must_train=True),
    evidence="bad.py raised {exception_md} at its first step; good.py trained {good_steps} steps "
             "(loss {good_first_loss} -> {good_final_loss}).",
)
