"""AMP006 update-without-step: ``update()`` with no step or unscale_ this iteration raises (section 2.2)."""

from ..signs import Raises
from ..spec import Spec

SPEC = Spec(
    code="AMP006",
    signs=(Raises(("AssertionError", "No inf checks were recorded prior to update")),),
)
