"""AMP201 scaler-in-eval: ``scale(val_loss)`` reports the metric times the scale; ``update()`` in eval
raises; ``step()`` in eval re-applies stale gradients; a scaled backward under no_grad raises
(probe c)."""

from ..signs import HARM, ExtraSteps, LossHarm, Raises, ScaledBy
from ..spec import Spec

SPEC = Spec(
    code="AMP201",
    signs=(
        ScaledBy("series", +1, kind=HARM),
        Raises(("AssertionError", "No inf checks were recorded prior to update"),
               ("RuntimeError", "does not require grad")),
        LossHarm("val_loss"),
        ExtraSteps(),
    ),
)
