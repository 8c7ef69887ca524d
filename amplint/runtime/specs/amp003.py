"""AMP003 optimizer-step-bypasses-scaler: ``optimizer.step()`` applies the scaled gradients, and the
``update()`` after it raises (amp-semantics.md probe d)."""

import math

from ..spec import Measure, Spec, raises
from ..trace import Trace

_raises = raises("AssertionError", "No inf checks were recorded prior to update", good_must_train=True)


def check(bad: Trace, good: Trace) -> Measure:
    m = _raises(bad, good)
    plain = [s for s in bad.steps if s.via == "optimizer"]
    first = plain[0] if plain else None
    nonfinite = bad.first_nonfinite_step is not None
    m.values.update({
        "bypass_update": first.update_norm if first else math.nan,
        "good_update": good.mean_update,
        "nonfinite_text": ", leaving non-finite parameters" if nonfinite else "",
    })
    return m


SPEC = Spec(
    code="AMP003",
    optimizer="sgd",
    check=check,
    evidence="bad.py's `optimizer.step()` applied the still-scaled gradients (‖Δθ‖ {bypass_update} vs a mean "
             "of {good_update} per step in good.py{nonfinite_text}), and the `scaler.update()` after it raised "
             "{exception_md} in the first iteration.",
)
