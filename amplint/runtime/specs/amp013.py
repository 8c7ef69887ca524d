"""AMP013 scaler-state-not-checkpointed: a resume without the scaler state restarts the scale from
its initial value, which re-calibrates and skips steps (probe i)."""

from ..signs import LossHarm, ScaleRestarts, SkippedMore
from ..spec import Spec

SPEC = Spec(
    code="AMP013",
    signs=(
        SkippedMore(after_last_scaler=True),
        LossHarm(),
        ScaleRestarts(),
    ),
)
