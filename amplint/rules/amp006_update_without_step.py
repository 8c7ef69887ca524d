from __future__ import annotations

from typing import Iterable

from . import edits
from .base import Finding, Rule
from .common import call_text, display_key, recv_text, related_at


class UpdateWithoutStep(Rule):
    """## What it does
    Checks for `scaler.update()` reachable on an iteration where neither `scaler.step(opt)` nor
    `scaler.unscale_(opt)` ran since the scaler was created or last updated. The typical case is
    gradient accumulation with the `update()` dedented out of the
    `if (i + 1) % accum == 0:` block that guards the step; another is an `update()` after an
    `optimizer.step()` that bypassed the scaler (AMP003 reports that step; fixing it fixes both).

    The finding is reported on the `update()` call. Updates in evaluation code are left to
    AMP201 (scaler-in-eval).

    ## Why is this bad?
    `update()` consumes the inf checks recorded by `step`/`unscale_`. With none recorded it
    raises `AssertionError: No inf checks were recorded prior to update.`, here on the first
    micro-step that is not an accumulation boundary. With a disabled scaler (`enabled=False`,
    or a CUDA scaler on a CPU-only machine) `update()` does nothing, so the crash only shows on
    the GPU.

    ## Example
    ```python
    for i, (x, y) in enumerate(loader):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = criterion(model(x), y) / accum
        scaler.scale(loss).backward()
        if (i + 1) % accum == 0:
            scaler.step(optimizer)
            optimizer.zero_grad()
        scaler.update()
    ```

    ## Use instead
    ```python
    for i, (x, y) in enumerate(loader):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = criterion(model(x), y) / accum
        scaler.scale(loss).backward()
        if (i + 1) % accum == 0:
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
    ```

    ## Known problems
    A step and an update guarded by two different conditions that are always equal (say
    `if step_now:` and `if (i + 1) % accum == 0:`) are not seen as correlated, and the update
    is reported. Steps made by unknown code that receives the scaler make the scaler's state
    unknown, and nothing is reported. `update(new_scale=...)` (a manual cap or back-off) checks
    no inf flags and is never reported. An update after a `for` loop that steps is not
    reported for the case where that loop runs zero times (an empty loader).

    ## Fix safety
    When the `update()` directly follows an `if` block (without `else`) that steps through the
    scaler, an unsafe fix moves it to the end of that block. Moving a statement changes what runs
    on the other iterations, so it needs review.

    ## References
    - [AMP examples: gradient accumulation](https://pytorch.org/docs/stable/notes/amp_examples.html#gradient-accumulation)
    - [`torch.amp.GradScaler.update`](https://pytorch.org/docs/stable/amp.html#torch.amp.GradScaler.update)
    """

    code = "AMP006"
    name = "update-without-step"
    message = "`{call}` can run with no `{scaler}.step()` or `unscale_()` since the last update"
    fix_title = "Move `{call}` under the guard of `{scaler}.step()`"
    fix_availability = "sometimes"
    triggers = ("scaler",)
    reported_on = "the `update()` call"

    def check(self, model) -> Iterable[Finding]:
        from ..model.flow.queries import updates_without_step

        for obs, bypass in updates_without_step(model):
            site = obs.site
            call = call_text(model, site)
            scaler = recv_text(model, site) or display_key(obs.scaler)
            yield Finding(
                node=site.node,
                stmt=site.stmt,
                message=self.message.format(call=call, scaler=scaler),
                fix=edits.move_under_previous_guard(model, site, self.fix_title.format(call=call, scaler=scaler)),
                related=tuple(r for n in bypass
                              for r in related_at(model, n, "this `step()` consumed the scaled gradients instead (AMP003)")),
            )
