from __future__ import annotations

from typing import Iterable

from .base import Finding, Rule

#: names that carry the scale factor (``inv_scale = 1.0 / scaler.get_scale()``)


class GradPenaltyNotUnscaled(Rule):
    """## What it does
    Checks for `torch.autograd.grad` called on a scaled output (`scaler.scale(loss)`, or a
    name bound to it) whose gradients are then used without dividing by the scale: the
    function never reads `scaler.get_scale()` (nor a `scale` / `inv_scale` value).

    The finding is reported on the `torch.autograd.grad(...)` call.

    ## Why is this bad?
    Gradients of a scaled loss are multiplied by the scale factor. `scaler.unscale_` only
    unscales the `.grad` fields of an optimizer's parameters; gradients returned by
    `autograd.grad` belong to no optimizer and stay scaled. A gradient-norm penalty built
    from them is inflated exactly by the scale (measured: 5446.2 instead of 5.3186 at a scale
    of 1024; a squared-norm penalty is off by the square), so the penalty swamps the loss
    and its weight changes every time the scale does.

    ## Example
    ```python
    grads = torch.autograd.grad(scaler.scale(loss), params, create_graph=True)
    with torch.autocast("cuda", dtype=torch.float16):
        penalty = torch.stack([g.pow(2).sum() for g in grads]).sum().sqrt()
        loss = loss + penalty
    scaler.scale(loss).backward()
    ```

    ## Use instead
    ```python
    scaled = torch.autograd.grad(scaler.scale(loss), params, create_graph=True)
    inv_scale = 1.0 / scaler.get_scale()
    grads = [g * inv_scale for g in scaled]
    with torch.autocast("cuda", dtype=torch.float16):
        penalty = torch.stack([g.pow(2).sum() for g in grads]).sum().sqrt()
        loss = loss + penalty
    scaler.scale(loss).backward()
    ```

    ## Known problems
    The check is per function: gradients returned to a caller (or a scale factor received as
    a parameter) are not followed, and any read of `get_scale()` in the function counts as
    unscaling. The inverse mistake, `autograd.grad` of an unscaled fp16 loss (underflow), is
    not reported here.

    ## Fix safety
    No fix is offered: where the gradients are used varies too much.

    ## References
    - [AMP examples: gradient penalty](https://pytorch.org/docs/stable/notes/amp_examples.html#gradient-penalty)
    - [`torch.autograd.grad`](https://pytorch.org/docs/stable/generated/torch.autograd.grad.html)
    """

    code = "AMP010"
    name = "grad-penalty-not-unscaled"
    message = "Gradients of `{scaler}.scale(...)` are used without dividing by `{scaler}.get_scale()`"
    fix_title = None
    fix_availability = "none"
    triggers = ("scaler",)
    reported_on = "the `torch.autograd.grad(...)` call"

    def check(self, model) -> Iterable[Finding]:
        from ..model.penalties import unscaled_grad_penalties

        for site, scaler in unscaled_grad_penalties(model):
            yield Finding(node=site.node, stmt=site.stmt, message=self.message.format(scaler=scaler))
