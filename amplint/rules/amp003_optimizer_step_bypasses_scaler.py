from __future__ import annotations

from typing import Iterable

from ._sequence import conditional_amp, display_key, scaler_text
from .base import Finding, FixPlan, NodeEdit, Rule
from .common import call_text


class OptimizerStepBypassesScaler(Rule):
    """## What it does
    Checks for `optimizer.step()` called directly on gradients that come from
    `scaler.scale(loss).backward()`, instead of `scaler.step(optimizer)`. Helpers of the same
    file that step the optimizer are followed.

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
    After `scaler.unscale_(optimizer)` the gradients are no longer scaled, so
    `unscale_(opt); opt.step()` (which still applies overflowing steps) is not reported. When an
    unscaled backward also ran since the scaled one, the step may belong to a network trained
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
    fix_title = "Replace with `{scaler}.step({opt})`"
    fix_availability = "sometimes"
    triggers = ("scaler",)
    reported_on = "the `optimizer.step()` call"

    def check(self, model) -> Iterable[Finding]:
        seen: set[int] = set()
        for obs in model.observations("opt_step"):
            site = obs.site
            if site is None or id(obs.node) in seen:
                continue
            key = None
            for st in obs.states:
                if st.plain or st.speculative:
                    continue  # an unscaled backward ran too: this optimizer may be a non-AMP one
                scaled = st.scaled_grads()
                if scaled:
                    key = scaled[0][0]
                    break
            if key is None or conditional_amp(model, obs.node) or _optimizer_owns_scaler(model, site, key):
                continue
            seen.add(id(obs.node))
            scaler = scaler_text(model, site.func, key)
            opt = model.code_for(site.recv_node) if site.recv_node is not None else "optimizer"
            shown = scaler or display_key(key)
            yield Finding(
                node=site.node,
                stmt=site.stmt,
                message=self.message.format(call=call_text(model, site), scaler=shown, opt=opt),
                fix=_fix(model, site, scaler, opt, self.fix_title),
            )


def _optimizer_owns_scaler(model, site, key: str) -> bool:
    """The optimizer is a wrapper that was handed the scaler (``AmpOptimizer(opt, scaler)``), or
    a class of this file whose ``step`` goes through a scaler: its ``step()`` is the scaler's."""
    last = display_key(key).rsplit(".", 1)[-1]
    recv = site.recv or ""
    for a in model.assignments:
        if recv not in a.targets or a.value is None or not hasattr(a.value, "args"):
            continue
        if any(last in model.code_for(arg.value) for arg in a.value.args):
            return True
    for cls in model.classes:
        step = cls.methods.get("step")
        if step is not None and any(c.method == "step" and model.is_scaler(step, c.recv) for c in step.calls):
            return True
    return False


def _fix(model, site, scaler: str | None, opt: str, title: str) -> FixPlan | None:
    if scaler is None or site.node.args or site.recv_node is None:
        return None
    if not any(c.method == "update" and c.recv == scaler for c in site.func.calls):
        return None  # the stepped scaler would then need an update() too (AMP001)
    for c in site.func.calls:
        if c.method == "step" and c.recv == scaler:
            a = c.arg(0, "optimizer")
            if a is not None and model.code_for(a.value) == opt:
                return None
    edit = NodeEdit("replace", site.node, f"{scaler}.step({opt})")
    return FixPlan("safe", title.format(scaler=scaler, opt=opt), [edit])
