"""AMP012 zero-grad-between-backward-and-step: no gradient is left and ``scaler.step`` raises (§2.2)."""

from ..spec import Spec, raises

SPEC = Spec(
    code="AMP012",
    optimizer="sgd",
    check=raises("AssertionError", "No inf checks were recorded for this optimizer", good_must_train=True),
    evidence="bad.py raised {exception_md} at its first `scaler.step`; good.py trained {good_steps} steps "
             "(loss {good_first_loss} -> {good_final_loss}).",
)
