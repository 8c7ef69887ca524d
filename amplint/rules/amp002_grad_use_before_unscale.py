from __future__ import annotations

from typing import Iterable

from . import edits
from .base import Finding, Rule
from .common import display_key, related_at, scaler_text, stepped_optimizer


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

    The finding is reported on the clip (or norm, or edit) call, once per statement. When the
    clip sits in a plain helper function of another module that is handed no scaler (a
    `clip_grads(model.parameters(), 1.0)` utility), the call of that helper in the training code
    is reported too: the helper is right wherever it runs after `unscale_`, and the call is
    what has to move.

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
    reported_on = "the clip or norm call (and the call of another module's clipping helper)"

    def check(self, model) -> Iterable[Finding]:
        from ..model.flow.queries import clips_on_scaled_grads, helper_clips_on_scaled_grads

        anchors: set[int] = set()
        for obs, key, witness, why in clips_on_scaled_grads(model):
            site = obs.site
            event = model.events.of(site)
            # through a local alias (``g = p.grad`` ... ``g.norm()``): the ``.grad`` read is the use
            node, stmt = (event.via.value, event.via.stmt) if event.via is not None else (site.node, site.stmt)
            if id(node) in anchors:
                continue
            anchors.add(id(node))
            scaler = scaler_text(model, site.func, key) or display_key(key)
            opt = stepped_optimizer(model, site.func, scaler)
            clip = site.method or (site.text or site.qual or "clip").rsplit(".", 1)[-1]
            stand_in = model.stand_ins.get(site.node)
            if stand_in is not None:
                clip = model.code_for(stand_in.operator).strip()  # ``p.grad += c``
            use = event.use or "read"
            yield Finding(
                node=node,
                stmt=stmt,
                message=_MESSAGES[use].format(scaler=scaler, opt=opt or "optimizer", clip=clip),
                fix=edits.insert_unscale(model, site, scaler, opt, self.fix_title.format(scaler=scaler, opt=opt)),
                related=related_at(model, witness, _WITNESS[why]) if witness is not None and witness is not site.node else (),
            )
        for call, obs, key, witness in helper_clips_on_scaled_grads(model):
            scaler = scaler_text(model, call.func, key) or display_key(key)
            opt = stepped_optimizer(model, call.func, scaler)
            helper = (call.text or "helper").rsplit(".", 1)[-1]
            use = model.events.of(obs.site).use or "read"
            yield Finding(
                node=call.node,
                stmt=call.stmt,
                message=_MESSAGES[use].format(scaler=scaler, opt=opt or "optimizer", clip=helper),
                fix=edits.insert_unscale(model, call, scaler, opt, self.fix_title.format(scaler=scaler, opt=opt)),
                related=related_at(model, obs.node, f"`{helper}()` {_VERB[use]} the gradients here")
                + (related_at(model, witness, _WITNESS["scaled"]) if witness is not None else ()),
            )


_VERB = {"clip": "clips", "edit": "edits", "read": "reads"}

_WITNESS = {
    "scaled": "the gradients were scaled by this backward",
    "implied": "the scaler steps here, so the gradients it is handed are still scaled",
}

_MESSAGES = {
    "clip": GradUseBeforeUnscale.message,
    "edit": "Gradients are edited while still scaled: call `{scaler}.unscale_({opt})` before `{clip}`",
    "read": "Gradient norms are read while still scaled (the scale times too large): "
            "call `{scaler}.unscale_({opt})` before `{clip}`",
}
