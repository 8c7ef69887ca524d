from __future__ import annotations

from typing import Iterable

from .base import Finding, Rule
from .common import recv_text


class ScalerStepClosure(Rule):
    """## What it does
    Checks for `scaler.step(optimizer, closure)` and `scaler.step(optimizer, closure=closure)`:
    a closure handed to an optimizer step that goes through a GradScaler.

    The finding is reported on the `step` call.

    ## Why is this bad?
    GradScaler cannot support closure optimizers (LBFGS and friends): it has to unscale and
    check the gradients for infinities *before* the optimizer runs, and a closure recomputes
    them inside `optimizer.step`. The keyword form raises
    `RuntimeError: Closure use is not currently supported if GradScaler is enabled.`; only
    when the scaler is enabled, so a CPU-only run with the default (disabled) scaler passes.
    The positional form slips past that check: the optimizer re-runs the closure, and if the
    closure scales its loss the update is applied with still-scaled gradients (measured: the
    update was 4096 times too large, exactly the scale); if it does not, the inf check looked
    at the wrong gradients.

    ## Example
    ```python
    def closure():
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = criterion(model(x), y)
        scaler.scale(loss).backward()
        return loss

    scaler.step(optimizer, closure)
    scaler.update()
    ```

    ## Use instead
    ```python
    optimizer.zero_grad()
    with torch.autocast("cuda", dtype=torch.float16):
        loss = criterion(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    ```
    A closure optimizer needs bf16 or fp32 instead of a GradScaler.

    ## Known problems
    A scaler that may be an instance of another class (a GradScaler subclass that supports
    closures, or whatever a factory returns) is not reported. A wrapper that forwards its own optional `closure=None` parameter (the step method of an
    optimizer wrapper) is not reported: with the default `None` nothing goes wrong, and the
    misuse is at the wrapper's caller, which amplint does not see.

    ## Fix safety
    No fix is offered: the loop has to be restructured (compute the loss and backward before
    the step) or moved off fp16.

    ## References
    - [`torch.amp.GradScaler.step`](https://pytorch.org/docs/stable/amp.html#torch.amp.GradScaler.step)
    - [Optimizers that take a closure](https://pytorch.org/docs/stable/optim.html#optimizer-step-closure)
    """

    code = "AMP011"
    name = "scaler-step-closure"
    message = "`{scaler}.step()` is given a closure: GradScaler does not support closure optimizers"
    fix_title = None
    fix_availability = "none"
    triggers = ("scaler",)
    reported_on = "the `scaler.step(...)` call"

    def check(self, model) -> Iterable[Finding]:
        from ..model.usage import bound_to_other_class, facts

        for site in facts(model).calls("step"):
            closure = site.keyword("closure")
            if closure is None:
                pos = site.positional()
                closure = pos[1] if len(pos) >= 2 else None
            if closure is None or model.values.may_be_none_only(site.func, closure.value):
                continue
            if bound_to_other_class(model, site.recv):
                continue  # a GradScaler subclass may support closures
            yield Finding(node=site.node, stmt=site.stmt, message=self.message.format(scaler=recv_text(model, site)))
