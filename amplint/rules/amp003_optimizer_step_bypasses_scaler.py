from __future__ import annotations

from typing import Iterable

from . import edits
from .base import Finding, Rule
from .common import call_text, display_key, scaler_text


class OptimizerStepBypassesScaler(Rule):
    """## What it does
    Checks for `optimizer.step()` called directly on gradients that come from
    `scaler.scale(loss).backward()`, instead of `scaler.step(optimizer)`. Helpers of the same
    file that step the optimizer are followed. An `optimizer.step()` after
    `scaler.unscale_(optimizer)` is reported too: the gradients are unscaled, but the step still
    bypasses the scaler's inf check, so a step whose gradients overflowed is applied (NaN weights
    after the first overflow) instead of skipped.

    The finding is reported on the `optimizer.step()` call.

    The `else:` arm of conditional AMP (`if scaler is not None: scaler.step(opt)` /
    `else: opt.step()`, or `if use_amp: ... else: loss.backward(); opt.step()`) is correct code
    and is not reported.

    ## Why is this bad?
    The gradients are still multiplied by the loss scale S (65536 by default), and nothing
    checks them for infinities. The optimizer applies an update S times too large: with SGD the
    measured loss went 12.3 -> 2.0e6 -> NaN within two steps. Adam normalises the magnitude
    and hides it until the first fp16 overflow, which turns every parameter into NaN at once
    because overflowing steps are no longer skipped. A `scaler.update()` after the bypassed step
    raises `AssertionError: No inf checks were recorded prior to update.` on the first
    iteration, after one catastrophic step has already been applied.

    ## Example
    ```python
    scaler.scale(loss).backward()
    optimizer.step()
    scaler.update()
    ```

    ## Use instead
    ```python
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    ```

    ## Known problems
    When an unscaled backward also ran since the scaled one, the step may belong to a network trained
    without AMP, and nothing is reported; neither is the step of an optimizer wrapper that was
    handed the scaler. With several optimizers, only the first step after the backward is
    checked.

    ## Fix safety
    Replacing `optimizer.step()` with `scaler.step(optimizer)` is a safe fix: the scaler unscales
    the gradients, skips steps with infinities and then calls the same `optimizer.step()`. It is
    offered when the step has no arguments (a closure cannot go through the scaler), the
    function does not already step that optimizer through the scaler, and it calls the scaler's
    `update()` (a scaler step without one would fail on the next iteration).

    ## References
    - [Automatic Mixed Precision examples: typical mixed precision training](https://pytorch.org/docs/stable/notes/amp_examples.html)
    - [`torch.amp.GradScaler.step`](https://pytorch.org/docs/stable/amp.html#torch.amp.GradScaler.step)
    """

    code = "AMP003"
    name = "optimizer-step-bypasses-scaler"
    message = "`{call}` bypasses `{scaler}` on scaled gradients: use `{scaler}.step({opt})`"
    UNCHECKED = ("`{call}` bypasses `{scaler}` after `{scaler}.unscale_({opt})`: the inf check is skipped, so "
                 "overflowing steps are applied: use `{scaler}.step({opt})`")
    fix_title = "Replace with `{scaler}.step({opt})`"
    fix_availability = "sometimes"
    triggers = ("scaler",)
    reported_on = "the `optimizer.step()` call"

    def check(self, model) -> Iterable[Finding]:
        from ..model.flow.queries import optimizer_steps_on_scaled_grads

        for obs, key, why in optimizer_steps_on_scaled_grads(model):
            site = obs.site
            scaler = scaler_text(model, site.func, key)
            opt = model.code_for(site.recv_node) if site.recv_node is not None else "optimizer"
            shown = scaler or display_key(key)
            message = self.message if why == "scaled" else self.UNCHECKED
            yield Finding(
                node=site.node,
                stmt=site.stmt,
                message=message.format(call=call_text(model, site), scaler=shown, opt=opt),
                fix=edits.step_through_scaler(model, site, scaler, opt, self.fix_title.format(scaler=shown, opt=opt)),
            )
