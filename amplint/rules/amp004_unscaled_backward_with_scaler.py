from __future__ import annotations

from typing import Iterable

from . import edits
from .base import Finding, Rule
from .common import call_text, display_key, scaler_text


class UnscaledBackwardWithScaler(Rule):
    """## What it does
    Checks for a plain `loss.backward()` whose gradients are then stepped through a GradScaler
    (`scaler.step(optimizer)`), with no `scaler.scale(...)` backward since the scaler's last
    step. The analysis follows branches, loops and helpers of the same file. Also reported: a
    float16 autocast loss back-propagated unscaled in a function that builds (or owns as
    `self.<attr>`) an enabled GradScaler that scales and steps nothing anywhere in the file, the scaler
    made for this backward and forgotten.

    The finding is reported on the `backward()` call.

    The `else:` arm of conditional AMP (`if use_amp: scaler.scale(loss).backward()` /
    `else: loss.backward()`) is correct code and is not reported.

    ## Why is this bad?
    The backward runs on the unscaled fp16 loss, so small gradients flush to zero (33% of the
    weight-gradient entries at a loss of 1e-5 in the probes), and then `scaler.step` divides
    the already unscaled gradients by the scale. When the scaler has never seen `scale()` the
    first step raises `AssertionError: Attempted step but _scale is None.`; once it has (a
    mixed loop, an earlier epoch), the failure is silent: the measured update shrank to
    4.4e-4 of the correct one and the loss stalled at 13.26 instead of 0.284.

    ## Example
    ```python
    with torch.autocast("cuda", dtype=torch.float16):
        loss = criterion(model(x), y)
    loss.backward()
    scaler.step(optimizer)
    scaler.update()
    ```

    ## Use instead
    ```python
    with torch.autocast("cuda", dtype=torch.float16):
        loss = criterion(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    ```

    ## Known problems
    A scaler made with `enabled=use_amp` and stepped unconditionally after a backward that is
    scaled only in an `if use_amp:` arm is correct; amplint follows the flag (also through
    `use_amp = args.amp` aliases and two separate `if` statements on it). Wrappers that scale the loss themselves
    (`accelerator.backward(loss)`) are not backward calls for this rule. When the backward may
    feed an optimizer stepped without the scaler, nothing is reported.

    ## Fix safety
    Wrapping the receiver, `loss.backward()` -> `scaler.scale(loss).backward()`, is a safe fix:
    it is what the scaler's step expects. It is offered when the receiver is a simple
    expression and the function uses a single scaler. For a scaler that scales and steps nothing
    no fix is offered: the optimizer's step and an `update()` would have to go through it too.

    ## References
    - [Automatic Mixed Precision examples](https://pytorch.org/docs/stable/notes/amp_examples.html)
    - [`torch.amp.GradScaler.scale`](https://pytorch.org/docs/stable/amp.html#torch.amp.GradScaler.scale)
    """

    code = "AMP004"
    name = "unscaled-backward-with-scaler"
    message = "`{call}` is not scaled but `{scaler}.step()` consumes its gradients: use `{scaler}.scale(...).backward()`"
    UNUSED = ("`{call}` back-propagates a float16 autocast loss unscaled while `{scaler}` scales nothing: "
              "use `{scaler}.scale(...).backward()`")
    fix_title = "Scale the loss: `{scaler}.scale(...).backward()`"
    fix_availability = "sometimes"
    triggers = ("scaler",)
    reported_on = "the `backward()` call"

    def check(self, model) -> Iterable[Finding]:
        from ..model.flow.queries import plain_backwards_into_steps, plain_fp16_backwards_beside_unused_scaler

        for site, scaler in plain_fp16_backwards_beside_unused_scaler(model):
            yield Finding(
                node=site.node,
                stmt=site.stmt,
                message=self.UNUSED.format(call=call_text(model, site), scaler=scaler),
            )  # no fix: the step and the update would have to go through the scaler too
        for site, key, _step in plain_backwards_into_steps(model, partial=False):
            scaler = scaler_text(model, site.func, key)
            shown = scaler or display_key(key)
            yield Finding(
                node=site.node,
                stmt=site.stmt,
                message=self.message.format(call=call_text(model, site), scaler=shown),
                fix=edits.wrap_in_scale(model, site, scaler, self.fix_title.format(scaler=shown)),
            )
