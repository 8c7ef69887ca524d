"""AMP903 scheduler-steps-on-skipped-step: the LR schedule advances on steps the scaler skipped;
PyTorch warns once (amp-semantics.md §3, lr_scheduler)."""

from ..spec import Measure, Spec, warns
from ..trace import Trace

_warns = warns("UserWarning", "before `optimizer.step()`")


def check(bad: Trace, good: Trace) -> Measure:
    m = _warns(bad, good)
    m.values.update({"bad_skipped": bad.n_skipped, "bad_steps": bad.n_steps, "good_skipped": good.n_skipped})
    return m


SPEC = Spec(
    code="AMP903",
    optimizer="sgd",
    check=check,
    observable="lr_scheduler UserWarning",
    evidence="the scheduler stepped through all {bad_skipped} optimizer steps the scaler skipped while it backed "
             "off, and PyTorch warned {messages_md}; good.py, which steps the scheduler only when the scale did not "
             "drop, emitted {good_count} such warnings.",
)
