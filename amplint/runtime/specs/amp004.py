"""AMP004 unscaled-backward-with-scaler: with no ``scale()`` call the first ``scaler.step`` raises (probe m)."""

from ..spec import Spec, raises

SPEC = Spec(
    code="AMP004",
    optimizer="sgd",
    check=raises("AssertionError", "_scale is None", good_must_train=True),
    evidence="bad.py raised {exception_md} at its first `scaler.step`; good.py trained {good_steps} steps "
             "(loss {good_first_loss} -> {good_final_loss}).",
)
