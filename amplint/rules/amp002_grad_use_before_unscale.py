from __future__ import annotations

from typing import Iterable

from .base import Finding, FixPlan, NodeEdit, Rule
from .common import dedupe


class GradUseBeforeUnscale(Rule):
    """## What it does
    Checks for gradient clipping, gradient-norm reads or gradient edits while the gradients
    are still multiplied by the loss scale: after `scaler.scale(loss).backward()` and before
    `scaler.unscale_(optimizer)` on that path. Covers `torch.nn.utils.clip_grad_norm_`,
    `clip_grad_value_`, `clip_grads_with_norm_`, `get_total_norm`, an FSDP module's own
    `clip_grad_norm_()`, norms and other magnitudes of `.grad` (`p.grad.norm()`,
    `torch.norm(p.grad)`, `p.grad.pow(2).sum()`, `p.grad.abs().max()`; element tests such as
    `p.grad.isnan().sum()` do not depend on the scale and are not reported) and edits
    that are not a rescaling (`p.grad.clamp_(-1, 1)`, `torch.nan_to_num(p.grad)`), also when
    the clip sits in a helper or another method of the same class that runs between backward
    and step.

    The finding is reported on the clip (or norm, or edit) call, once per statement.

    ## Why is this bad?
    The gradients are still scaled by S (65536 by default). `clip_grad_norm_` sees a norm S
    times too large, so clipping to `max_norm` leaves `max_norm / S` after the scaler
    unscales: with SGD the update shrinks to about 1/S and the loss stops moving (measured:
    update 6.1e-5 of the fixed loop's, loss 14.15 against 0.17). Any logged gradient norm is
    S times too large. `clip_grad_value_` also clamps infinities to finite values, so the
    scaler never sees the overflow and never backs off.

    ## Example
    ```python
    scaler.scale(loss).backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    scaler.step(optimizer)
    scaler.update()
    ```

    ## Use instead
    ```python
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    scaler.step(optimizer)
    scaler.update()
    ```

    ## Known problems
    Framework wrappers that unscale themselves (`accelerator.clip_grad_norm_`, Lightning's
    `clip_gradients`) are not clip calls for this rule. A helper of another module that
    receives the scaler may unscale; amplint then draws no conclusion. With several
    optimizers, an `unscale_` of any of them counts as unscaling.

    ## Fix safety
    The fix inserts `scaler.unscale_(optimizer)` before the clip (before the loop around it,
    for a per-parameter edit). It is safe when the function steps exactly one optimizer
    through the scaler, nothing unscales it yet, and the clip runs before that step in the
    same block (or in a statement of that block): the scaler's `step` then skips its own
    unscale. With several optimizers, an `unscale_` already present, or a clip that runs on
    iterations without a step (every accumulation micro-step while the step is gated, where
    a second `unscale_` would raise), no fix is offered.

    ## References
    - [AMP examples: working with unscaled gradients (gradient clipping)](https://pytorch.org/docs/stable/notes/amp_examples.html#gradient-clipping)
    """

    code = "AMP002"
    name = "grad-use-before-unscale"
    message = "Gradients are clipped while still scaled: call `{scaler}.unscale_({opt})` before `{clip}`"
    fix_title = "Insert `{scaler}.unscale_({opt})` before the clip"
    fix_availability = "sometimes"
    triggers = ("scaler",)
    reported_on = "the clip or norm call"

    def check(self, model) -> Iterable[Finding]:
        from ..model.flow import grad_use

        reported: set[int] = set()
        for obs in model.observations("clip"):
            scaled = [s for st in obs.states for s, _node in st.scaled_grads()]
            if not scaled or obs.site is None:
                continue
            site = obs.site
            if id(site.stmt) in reported:
                continue  # ``p.grad.norm().max()``: one finding per statement
            reported.add(id(site.stmt))
            scaler_key = scaled[0]
            scaler, opt = _scaler_and_optimizer(model, site, scaler_key)
            clip = site.method or (site.text or site.qual or "clip").rsplit(".", 1)[-1]
            message = _MESSAGES[grad_use(site)]
            yield Finding(
                node=site.node,
                stmt=site.stmt,
                message=message.format(scaler=scaler, opt=opt or "optimizer", clip=clip),
                fix=_fix(model, site, scaler, opt, self.fix_title),
            )


_MESSAGES = {
    "clip": GradUseBeforeUnscale.message,
    "edit": "Gradients are edited while still scaled: call `{scaler}.unscale_({opt})` before `{clip}`",
    "read": "Gradient norms are read while still scaled (the scale times too large): "
            "call `{scaler}.unscale_({opt})` before `{clip}`",
}


def _scaler_and_optimizer(model, site, scaler_key: str) -> tuple[str, str | None]:
    """The scaler and the single optimizer it steps, as written in the clip's function."""
    func = site.func
    scaler_text = None
    opts = []
    for c in func.calls:
        if c.recv is not None and c.method in ("step", "unscale_", "scale") and model.is_scaler(func, c.recv):
            scaler_text = scaler_text or c.recv
            if c.method == "step":
                a = c.arg(0, "optimizer")
                if a is not None:
                    opts.append(model.code_for(a.value))
    if scaler_text is None:
        scaler_text = scaler_key.rsplit("#", 1)[-1].split(".", 1)[-1] if "#" in scaler_key else scaler_key
    uniq = dedupe(opts)
    return scaler_text, (uniq[0] if len(set(uniq)) == 1 else None)


def _fix(model, site, scaler: str, opt: str | None, title: str) -> FixPlan | None:
    if opt is None or not model.is_line(site.stmt):
        return None
    func = site.func
    if any(c.method == "unscale_" and c.recv == scaler for c in func.calls):
        return None
    steps = [c for c in func.calls if c.method == "step" and c.recv == scaler]
    if len(steps) != 1:
        return None
    # a clip inside a loop of its own (``for p in params: p.grad.clamp_()``) is unscaled once,
    # before that loop: an ``unscale_`` per parameter would raise
    inner = [loop for loop in site.loops if loop not in steps[0].loops]
    anchor = inner[0] if inner else site.stmt
    if not _runs_before_step(model, func, anchor, steps[0].stmt):
        # e.g. a clip on every accumulation micro-step with the step gated: an
        # ``unscale_`` there would run twice before one step (AMP005, a RuntimeError)
        return None
    return FixPlan("safe", title.format(scaler=scaler, opt=opt), [NodeEdit("insert_before", anchor, f"{scaler}.unscale_({opt})")])


def _runs_before_step(model, func, anchor, step_stmt) -> bool:
    """``anchor`` sits in the step's block (or in a statement of it) before the step.

    Then every pass through the anchor is followed by that step in the same iteration.
    """
    from ..model.syntax import contains
    from ._sequence import enclosing_block

    block, index = enclosing_block(model, func, step_stmt)
    if block is None:
        return False
    return any(contains(stmt, anchor) for stmt in block[:index])
