from __future__ import annotations

from typing import Iterable

from . import edits
from .base import Finding, Rule
from .common import call_text, recv_text


class StepWithoutUpdate(Rule):
    """## What it does
    Checks for a `scaler.step(optimizer)` from which some path reaches the next iteration of
    the training loop, or another `step` on the same optimizer, without `scaler.update()`.

    The finding is reported on the `step` call that is not followed by an `update()`.

    ## Why is this bad?
    `update()` is the only call that returns GradScaler's per-optimizer state to READY and
    adapts the loss scale. With one enabled scaler, the next iteration's `step` raises
    `RuntimeError: step() has already been called since the last update().` With a disabled
    scaler (`torch.amp.GradScaler()` on a machine without CUDA, or `enabled=False`) nothing
    happens, so CPU-only CI passes code that crashes on the GPU box. When the scaler or the
    optimizer is re-created every iteration, the scale never moves: after an overflowing
    initial scale every single step is skipped and the model learns nothing.

    The analysis follows branches, loops with their back edges, `continue`/`break`/`return`,
    `try`/`finally`, and helpers of the same file (a `step` in a helper whose caller calls
    `update()` after it is fine).

    ## Example
    ```python
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = criterion(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
    ```

    ## Use instead
    ```python
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = criterion(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    ```

    ## Known problems
    A scaler handed to code outside the file (a callback, a framework) may be updated
    there; amplint then draws no conclusion. A loop whose optimizer is rebuilt each iteration
    hides the step-after-step error at runtime; amplint still reports the step (the scale never
    adapts). A flag that records whether a step ran (`if stepped: scaler.update()` at the top
    of the loop) is not followed: the update looks optional.

    ## Fix safety
    An unsafe fix inserts `scaler.update()` right after the step when the step is the only one
    of its function and no `update()` of that scaler exists anywhere in the file: where the
    update belongs (after the last of several optimizers' steps, at the accumulation boundary,
    in a caller that already updates) needs a human.

    ## References
    - [Automatic Mixed Precision examples: typical mixed precision training](https://pytorch.org/docs/stable/notes/amp_examples.html)
    - [`torch.amp.GradScaler.update`](https://pytorch.org/docs/stable/amp.html#torch.amp.GradScaler.update)
    """

    code = "AMP001"
    name = "step-without-update"
    message = "`{step}` is not followed by `{scaler}.update()` before the next step"
    fix_title = "Call `{scaler}.update()` after the last `step` of the iteration"
    fix_availability = "sometimes"
    triggers = ("scaler",)
    reported_on = "the `scaler.step(...)` call"

    def check(self, model) -> Iterable[Finding]:
        from ..model.flow.queries import steps_reaching_step_without_update

        for node in steps_reaching_step_without_update(model):
            site = model.call_of.get(node)
            if site is None:
                continue
            scaler = recv_text(model, site)
            yield Finding(
                node=node,
                stmt=site.stmt,
                message=self.message.format(step=call_text(model, site), scaler=scaler),
                fix=edits.insert_update(model, site, scaler, self.fix_title.format(scaler=scaler)),
            )
