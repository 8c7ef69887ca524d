"""AMP012 zero-grad-between-backward-and-step: with ``set_to_none=True`` no gradient is left and the
step raises; with ``set_to_none=False`` the step consumes zeros (section 2.2)."""

from ..signs import LossHarm, Raises, ZeroGrads
from ..spec import Spec

SPEC = Spec(
    code="AMP012",
    signs=(
        Raises(("AssertionError", "No inf checks were recorded for this optimizer")),
        LossHarm(),
        ZeroGrads(),
    ),
)
