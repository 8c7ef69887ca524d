"""AMP003 optimizer-step-bypasses-scaler: ``optimizer.step()`` applies the still-scaled gradients;
an ``update()`` after it raises, and without one SGD diverges (probe d)."""

from ..signs import LossHarm, Raises, ScaledBy
from ..spec import Spec

SPEC = Spec(
    code="AMP003",
    signs=(
        Raises(("AssertionError", "No inf checks were recorded prior to update")),
        LossHarm(),
        ScaledBy("update", +1),
    ),
)
