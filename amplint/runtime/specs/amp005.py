"""AMP005 unscale-twice: a second ``unscale_`` before ``update()``, or one after ``step()``, raises (probe f)."""

from ..signs import Raises
from ..spec import Spec

SPEC = Spec(
    code="AMP005",
    signs=(
        Raises(("RuntimeError", "unscale_() has already been called on this optimizer"),
               ("RuntimeError", "unscale_() is being called after step()")),
    ),
)
