"""AMP001 step-without-update: the second ``scaler.step`` raises (amp-semantics.md §2.2, probe a)."""

from ..spec import Spec, raises

SPEC = Spec(
    code="AMP001",
    optimizer="sgd",
    check=raises("RuntimeError", "step() has already been called since the last update()", good_must_train=True),
    evidence="bad.py raised {exception_md} after {step_index} completed step(s); good.py trained "
             "{good_steps} steps without an exception (loss {good_first_loss} -> {good_final_loss}).",
)
