"""AMP015 scaled-loss-as-metric: the logged loss is the scaled one, scale times too large."""

from ..signs import HARM, ScaledBy
from ..spec import Spec

SPEC = Spec(
    code="AMP015",
    signs=(ScaledBy("series", +1, kind=HARM),),
)
