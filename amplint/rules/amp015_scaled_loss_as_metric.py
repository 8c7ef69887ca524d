from __future__ import annotations

from typing import Iterable

from . import edits
from .base import Finding, Rule
from .common import recv_text


class ScaledLossAsMetric(Rule):
    """## What it does
    Checks for the output of `scaler.scale(x)` used as a number for logging or metrics:
    `scaler.scale(loss).item()`, `float(scaler.scale(loss))`, or a name bound to
    `scaler.scale(loss)` that is then printed, logged, appended to a list, formatted or
    accumulated (`total += scaled.item()`), or converted and returned (`return scaled.item()`).
    Backpropagating it
    (`scaler.scale(loss).backward()`) is of course fine.

    The finding is reported on the use that turns the scaled value into a metric (for a
    name, on its first such use; the fix covers all of them). In evaluation code the same call
    is also AMP201 (`scaler-in-eval`): both are reported, and either fix removes both.

    ## Why is this bad?
    `scale()` multiplies the loss by the current scale factor (65536 at the start). The logged
    loss is that many times too large (measured: 4096 times, exactly the scale at that
    point), and since the scale halves on every overflow and doubles every 2000 clean steps,
    the curve shows jumps that have nothing to do with training.

    ## Example
    ```python
    scaled = scaler.scale(loss)
    scaled.backward()
    scaler.step(optimizer)
    scaler.update()
    running_loss += scaled.item()
    ```

    ## Use instead
    ```python
    scaled = scaler.scale(loss)
    scaled.backward()
    scaler.step(optimizer)
    scaler.update()
    running_loss += loss.item()
    ```

    ## Known problems
    Only uses in the same function, after the binding, are followed; a scaled loss returned
    to a caller that logs it is not seen. Values collected under other names than the sinks
    amplint knows (`print`, `log*`, `append`, `add_scalar`, `set_postfix`, `meter.update`,
    f-strings, `+=`) are not reported.

    ## Fix safety
    The fix makes the metric read the unscaled value and is safe: `scaler.scale(x).item()`
    becomes `x.item()`; a metric use of `scaled = scaler.scale(loss)` reads `loss` instead
    when `loss` is not rebound afterwards; `loss = scaler.scale(loss)` becomes
    `scaled_loss = scaler.scale(loss)` with its `backward()` calls renamed, when those and
    the metrics are its only uses. The gradients do not change.

    ## References
    - [`torch.amp.GradScaler.scale`](https://pytorch.org/docs/stable/amp.html#torch.amp.GradScaler.scale)
    - [AMP examples: typical mixed precision training](https://pytorch.org/docs/stable/notes/amp_examples.html)
    """

    code = "AMP015"
    name = "scaled-loss-as-metric"
    message = "The output of `{scaler}.scale()` is used as a metric: it is multiplied by the loss scale"
    fix_title = "Report the unscaled value"
    fix_availability = "sometimes"
    triggers = ("scaler",)
    reported_on = "the metric use of the scaled value"

    def check(self, model) -> Iterable[Finding]:
        from ..model.metrics import scaled_metric_uses

        for m in scaled_metric_uses(model):
            message = self.message.format(scaler=recv_text(model, m.site))
            if m.bound is None:
                fix = edits.unscaled_inline_metric(model, m.site, m.use, self.fix_title)
            else:
                target, assign = m.bound
                fix = edits.unscaled_bound_metric(model, m.site, target, assign, m.kinds, m.uses, self.fix_title)
            related = ((m.site.node, "the scaled value comes from here"),) if m.node is not m.site.node else ()
            yield Finding(node=m.node, stmt=m.stmt, message=message, fix=fix, related=related)
