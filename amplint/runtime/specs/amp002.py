"""AMP002 grad-use-before-unscale: clipping still-scaled gradients: the clip sees scale x the norm,
the SGD update shrinks to ~1/scale and the loss stalls; a logged norm is scale x too large
(amp-semantics.md probe b; with Adam only the clip norm and the logged norm show it)."""

from ..signs import HARM, LossHarm, ScaledBy
from ..spec import Spec

SPEC = Spec(
    code="AMP002",
    optimizer="sgd",  # Adam normalises the update size and hides the loss effect (the mechanism still shows)
    signs=(
        ScaledBy("series", +1, kind=HARM),  # a logged gradient norm
        LossHarm(),
        ScaledBy("clip", +1),
        ScaledBy("update", -1),
    ),
    context="with SGD",
)
