"""AMP104 custom-function-autocast-mismatch: ``custom_fwd`` without ``custom_bwd`` breaks backward."""

from ..spec import Spec, raises

SPEC = Spec(
    code="AMP104",
    optimizer="sgd",
    check=raises("RuntimeError", "to have the same dtype", good_must_train=True),
    evidence="bad.py raised {exception_md} in the first backward; good.py (both decorators) trained "
             "{good_steps} steps (loss {good_first_loss} -> {good_final_loss}).",
)
