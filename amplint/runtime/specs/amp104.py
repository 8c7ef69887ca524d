"""AMP104 custom-function-autocast-mismatch: ``custom_fwd`` without ``custom_bwd`` breaks the backward
(dtype mismatch); ``custom_bwd`` without ``custom_fwd`` raises an AttributeError (probe j)."""

from ..signs import Raises
from ..spec import Spec

SPEC = Spec(
    code="AMP104",
    signs=(
        Raises(("RuntimeError", "same dtype"), ("RuntimeError", "expected scalar type"),
               ("AttributeError", "_fwd_used_autocast")),
    ),
)
