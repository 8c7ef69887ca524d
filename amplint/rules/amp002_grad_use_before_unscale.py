from __future__ import annotations

from typing import Iterable

from .base import Finding, FixPlan, NodeEdit, Rule
from .common import dedupe


class GradUseBeforeUnscale(Rule):
    """## What it does
    Checks for gradient clipping, or gradient-norm reads, while the gradients are still
    multiplied by the loss scale: after `scaler.scale(loss).backward()` and before
    `scaler.unscale_(optimizer)` on that path. Covers `torch.nn.utils.clip_grad_norm_`,
    `clip_grad_value_`, `clip_grads_with_norm_`, `get_total_norm`, and norms of `.grad`
    (`p.grad.norm()`, `torch.norm(p.grad)`), also when the clip sits in a helper or another
    method of the same class that runs between backward and step.

    The finding is reported on the clip (or norm) call.

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
    The fix inserts `scaler.unscale_(optimizer)` before the clip. It is safe when the function
    steps exactly one optimizer through the scaler and nothing unscales it yet: the scaler's
    `step` then skips its own unscale. With several optimizers, or an `unscale_` already
    present, no fix is offered.

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
        for obs in model.observations("clip"):
            scaled = [s for st in obs.states for s, _node in st.scaled_grads()]
            if not scaled or obs.site is None:
                continue
            site = obs.site
            scaler_key = scaled[0]
            scaler, opt = _scaler_and_optimizer(model, site, scaler_key)
            clip = (site.text or "clip").rsplit(".", 1)[-1]
            yield Finding(
                node=site.node,
                stmt=site.stmt,
                message=self.message.format(scaler=scaler, opt=opt or "optimizer", clip=clip),
                fix=_fix(model, site, scaler, opt, self.fix_title),
            )


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
    if sum(1 for c in func.calls if c.method == "step" and c.recv == scaler) != 1:
        return None
    return FixPlan("safe", title.format(scaler=scaler, opt=opt), [NodeEdit("insert_before", site.stmt, f"{scaler}.unscale_({opt})")])
