"""AMP007 update-per-optimizer: one update per optimizer advances the growth tracker several times
per iteration, so the scale grows faster than in the documented loop (probe i)."""

from ..signs import LossHarm, ScaleAhead, SkippedMore, UpdatesPerStep
from ..spec import Spec

SPEC = Spec(
    code="AMP007",
    signs=(
        ScaleAhead(),
        SkippedMore(),
        LossHarm(),
        UpdatesPerStep(),
    ),
)
