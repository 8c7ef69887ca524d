from __future__ import annotations

from typing import Iterable

from . import edits
from .base import Finding, Rule
from .common import display_key


class ScalerCreatedInLoop(Rule):
    """## What it does
    Checks for a GradScaler constructed on every iteration of the loop that steps it: the
    constructor inside the training loop's body (also the body of an epoch loop whose inner
    batch loop steps it: the calibration restarts every epoch), or inside a function of the same
    file (a `train_step()` that builds its own scaler) that the loop calls once per batch.

    The finding is reported on the `GradScaler(...)` constructor call.

    A scaler built once before the loop (in `__init__`, `main`) is fine and not reported, and so
    is one per training run (the iteration of a loop over folds or configurations that also
    builds the optimizer) and lazy initialisation on the first iteration (`if scaler is None:
    scaler = GradScaler(...)`).

    ## Why is this bad?
    The loss scale is calibrated over many iterations: it backs off after overflows and grows
    after `growth_interval` clean steps. A new scaler starts again from `init_scale` (65536)
    every iteration, so the calibration never happens. When the initial scale overflows, every
    single step is skipped: measured with `init_scale=2**24`, 100 of 100 steps skipped and a
    flat loss, against 10 skipped steps with one scaler built before the loop. A fresh scaler
    per iteration also hides a missing `update()` (AMP001).

    ## Example
    ```python
    for x, y in loader:
        scaler = torch.amp.GradScaler("cuda")
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = criterion(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    ```

    ## Use instead
    ```python
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = criterion(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    ```

    ## Known problems
    A per-batch function that builds a scaler is only reported when a loop of the same file
    calls it; a function called per batch by a framework or another module is not seen. A scaler
    built with a literal `enabled=False` is harmless and not reported.

    ## Fix safety
    When the assignment sits directly in the loop's body, an unsafe fix moves it before the
    loop. It is unsafe because the constructor's arguments may depend on the iteration.

    ## References
    - [`torch.amp.GradScaler`](https://pytorch.org/docs/stable/amp.html#gradient-scaling)
    - [AMP examples: typical mixed precision training](https://pytorch.org/docs/stable/notes/amp_examples.html)
    """

    code = "AMP008"
    name = "scaler-created-in-loop"
    message = "`{ctor}` runs {where}: the loss scale restarts at `init_scale` every iteration"
    fix_title = "Build the scaler once, before the loop"
    fix_availability = "sometimes"
    triggers = ("scaler",)
    reported_on = "the `GradScaler(...)` constructor call"

    def check(self, model) -> Iterable[Finding]:
        from ..model.flow.queries import recreated_scalers

        for obs in recreated_scalers(model):
            site = obs.site
            if model.literal_keyword(site, "enabled") is False:
                continue  # a disabled scaler does nothing, wherever it is built
            name = display_key(obs.scaler).rsplit(".", 1)[-1]
            if any(name in text for text in model.flow.enclosing_tests(obs.node)):
                continue  # ``if scaler is None: scaler = GradScaler()``: built once, lazily
            ctor = site.text or "GradScaler"
            where = (f"on every call of `{site.func.name}()` from the training loop" if obs.inlined
                     else "on every iteration of the loop that steps it")
            yield Finding(
                node=site.node,
                stmt=site.stmt,
                message=self.message.format(ctor=f"{ctor}(...)" if site.node.args else f"{ctor}()", where=where),
                fix=None if obs.inlined else edits.hoist_out_of_loop(model, site, self.fix_title),
            )
