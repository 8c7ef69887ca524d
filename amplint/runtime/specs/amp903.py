"""AMP903 scheduler-steps-on-skipped-step: the LR schedule advances on steps the scaler skipped, so
the steps applied run with a schedule that is ahead (PyTorch warns once)."""

from ..signs import ScheduleAhead, SchedulerOnSkipped, Warns
from ..spec import Spec

SPEC = Spec(
    code="AMP903",
    signs=(
        ScheduleAhead(),
        SchedulerOnSkipped(),
        Warns("UserWarning", "lr_scheduler.step()"),
    ),
)
