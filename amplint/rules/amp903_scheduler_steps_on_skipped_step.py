from __future__ import annotations

from typing import Iterable

from .base import Finding, Rule
from .common import call_text, recv_text

_SKIP_CHECKS = ("get_scale", "found_inf", "_found_inf_per_device", "step_was_skipped", "optimizer_step_was_skipped")


class SchedulerStepsOnSkippedStep(Rule):
    """## What it does
    Checks for a learning-rate scheduler stepped right after `scaler.update()`, in the same
    iteration, by a function that never compares `scaler.get_scale()` before and after the
    update to learn whether the optimizer step was skipped (a `get_scale()` that is only logged,
    `print(f"scale {scaler.get_scale()}")`, compares nothing).

    The finding is reported on the scheduler's `step()` call. Off by default, informational: the
    documented AMP recipe does exactly this, and for long schedules the drift is small.

    ## Why is this bad?
    `scaler.step(optimizer)` skips the optimizer step when the gradients overflowed, which is
    routine while the scale calibrates (the first iterations with the default scale of 65536).
    The scheduler advances anyway, so the learning-rate schedule runs ahead of the real number
    of optimizer steps; a warm-up of a few steps can be partly spent on skipped steps. When the
    very first step is skipped PyTorch warns: `Detected call of lr_scheduler.step() before
    optimizer.step()`.

    ## Example
    ```python
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    scheduler.step()
    ```

    ## Use instead
    ```python
    scaler.scale(loss).backward()
    scale = scaler.get_scale()
    scaler.step(optimizer)
    scaler.update()
    if scaler.get_scale() >= scale:  # the scale only shrinks when the step was skipped
        scheduler.step()
    ```

    ## Known problems
    A scheduler is recognised by its name (`sched` in it) or by its `torch.optim.lr_scheduler`
    constructor in the same file. A scheduler stepped in another function than the `update()`,
    or with arguments (`ReduceLROnPlateau.step(metric)`), is not reported.

    ## Fix safety
    No fix is offered: whether skipped steps should count is a training decision.

    ## References
    - [pytorch/pytorch#44511: lr_scheduler warning after a skipped GradScaler step](https://github.com/pytorch/pytorch/issues/44511)
    - [`torch.amp.GradScaler.get_scale`](https://pytorch.org/docs/stable/amp.html#torch.amp.GradScaler.get_scale)
    """

    code = "AMP903"
    name = "scheduler-steps-on-skipped-step"
    message = "`{call}` advances the schedule even when `{scaler}.step()` skipped the optimizer step"
    fix_availability = "none"
    default_enabled = False
    triggers = ("scaler",)
    reported_on = "the scheduler's `step()` call"

    def check(self, model) -> Iterable[Finding]:
        from ..model.flow.queries import eval_context

        schedulers = _scheduler_names(model)
        seen: set[int] = set()
        for obs in model.observations("update"):
            site = obs.site
            if site is None or eval_context(obs, model) is not None:
                continue
            func = site.func
            # a read of the scale that is only logged (``print(f"{scaler.get_scale()}")``) decides
            # nothing
            if any((c.method in _SKIP_CHECKS or (c.text or "").endswith(_SKIP_CHECKS)) and not model.value_dropped(c)
                   for c in func.calls):
                continue
            if any(t in model.code_for(func.node) for t in ("found_inf", "step_was_skipped")):
                continue
            calls = func.calls
            try:
                start = calls.index(site)
            except ValueError:
                continue
            for c in calls[start + 1:]:
                if c.method == "update" and c.recv == site.recv:
                    break
                if c.method != "step" or c.recv is None or c.node.args or c.loops != site.loops:
                    continue
                if not _is_scheduler(c.recv, schedulers) or id(c.node) in seen:
                    continue
                if model.dtypes.exclusive(c.arms, site.arms):
                    continue  # the ``else`` of the arm that updates: the step did not run there
                seen.add(id(c.node))
                yield Finding(
                    node=c.node,
                    stmt=c.stmt,
                    message=self.message.format(call=call_text(model, c), scaler=recv_text(model, site)),
                )
                break


def _scheduler_names(model) -> set[str]:
    out = set()
    for a in model.assignments:
        v = a.value
        if v is None or not hasattr(v, "func"):
            continue
        q = model.imports.qualify(v.func) or ""
        if q.startswith("torch.optim.lr_scheduler."):
            out.update(t for t in a.targets if t is not None)
    return out


def _is_scheduler(recv: str, names: set[str]) -> bool:
    if recv in names:
        return True
    last = recv.rsplit(".", 1)[-1].lower()
    return "sched" in last
