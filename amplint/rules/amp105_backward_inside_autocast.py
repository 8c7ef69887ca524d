from __future__ import annotations

from typing import Iterable

from . import edits
from .base import Finding, Rule
from .common import call_text


class BackwardInsideAutocast(Rule):
    """## What it does
    Checks for a backward pass (`loss.backward()`, `scaler.scale(loss).backward()`,
    `torch.autograd.backward(...)`) written inside an enabled autocast region: the body of
    `with torch.autocast(...)` (any spelling, including a context manager held in a
    variable) or a function decorated with autocast. Regions disabled by a literal
    `enabled=False`, or by an unsupported dtype, do not count; `enabled=<variable>` does.

    The finding is reported on the backward call. It is informational.

    ## Why is this bad?
    The documentation recommends exiting autocast before the backward pass: the backward
    ops already run in the dtype autocast chose for their forward op, so nothing is gained,
    and under `torch.compile` the default `backward_pass_autocast="same_as_forward"`
    assumes the backward runs under the same autocast as the forward. In eager mode the
    gradients are bit-identical (measured: maximum difference 0.0), so this is a matter of
    following the documented pattern, not a numerical bug.

    ## Example
    ```python
    with torch.autocast("cuda", dtype=torch.float16):
        loss = criterion(model(x), y)
        scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    ```

    ## Use instead
    ```python
    with torch.autocast("cuda", dtype=torch.float16):
        loss = criterion(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    ```

    ## Known problems
    Only lexical containment is checked: a backward in a helper called from the region is
    not reported.

    ## Fix safety
    When the backward is a statement of its own near the end of the `with` body, followed
    only by optimizer and scaler bookkeeping (`step`, `update`, `zero_grad`, `unscale_`
    calls), the safe fix moves those lines out of the block, right after it, unchanged and in
    order. The `with` must have the autocast as its only item and keep at least one
    statement. Nothing that computes a value moves, so nothing else can observe the
    difference.

    ## References
    - [AMP examples: typical mixed precision training (backward outside autocast)](https://pytorch.org/docs/stable/notes/amp_examples.html#typical-mixed-precision-training)
    - [`torch.autocast`: "Backward passes under autocast are not recommended"](https://pytorch.org/docs/stable/amp.html#torch.autocast)
    """

    code = "AMP105"
    name = "backward-inside-autocast"
    message = "`{call}` runs inside the autocast region: exit autocast before the backward pass"
    fix_title = "Move the backward pass out of the `with` block"
    fix_availability = "sometimes"
    triggers = ("autocast",)
    screen = "autocast_backward"
    reported_on = "the backward call"
    severity = "info"

    def check(self, model) -> Iterable[Finding]:
        from ..model import autocast_facts as AF
        from ..model import names as N

        if not any(r.kind == "autocast" for r in model.regions):
            return
        for site in model.calls:
            if site.in_lambda or not site.regions:
                continue
            if site.method != "backward" and site.qual not in N.AUTOGRAD_BACKWARD:
                continue
            r = AF.innermost_autocast(site.regions)
            if r is None or not AF.autocast_on(model, r):
                continue
            yield Finding(
                node=site.node,
                stmt=site.stmt,
                message=self.message.format(call=call_text(model, site)),
                fix=edits.backward_out_of_autocast(model, site, r, self.fix_title),
            )
