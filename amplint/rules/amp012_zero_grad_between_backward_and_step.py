from __future__ import annotations

from typing import Iterable

from .base import Finding, Rule
from .common import call_text, display_key


class ZeroGradBetweenBackwardAndStep(Rule):
    """## What it does
    Checks for `optimizer.zero_grad()` (or `model.zero_grad()`) between
    `scaler.scale(loss).backward()` and the `scaler.step(optimizer)` that should consume those
    gradients, with no backward in between. Helpers of the same file are followed.

    The finding is reported on the `zero_grad()` call.

    ## Why is this bad?
    The step runs on wiped gradients. With the default `set_to_none=True` no parameter has a
    gradient and `scaler.step` raises `AssertionError: No inf checks were recorded for this
    optimizer.` With `zero_grad(set_to_none=False)` the zero gradients pass the inf check
    silently: plain SGD does not move at all, and momentum or Adam keep moving on stale
    buffers only. Either way the backward's work is thrown away.

    ## Example
    ```python
    with torch.autocast("cuda", dtype=torch.float16):
        loss = criterion(model(x), y)
    scaler.scale(loss).backward()
    optimizer.zero_grad()
    scaler.step(optimizer)
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

    ## Known problems
    `zero_grad()` on another optimizer than the one stepped is not reported (it is a common and
    correct way to drop the gradients a GAN's generator loss left in the discriminator).
    `model.zero_grad()` is only reported when the scaler steps a single optimizer. Gradients
    written by hand (`p.grad = ...`) after the `zero_grad()` are not seen.

    ## Fix safety
    No fix is offered: the call belongs at the start of the iteration or after `update()`, and
    with gradient accumulation only a human knows which.

    ## References
    - [AMP examples: typical mixed precision training](https://pytorch.org/docs/stable/notes/amp_examples.html)
    - [`torch.optim.Optimizer.zero_grad`](https://pytorch.org/docs/stable/generated/torch.optim.Optimizer.zero_grad.html)
    """

    code = "AMP012"
    name = "zero-grad-between-backward-and-step"
    message = "`{call}` wipes the gradients of the scaled backward before `{scaler}.step({opt})` uses them"
    fix_availability = "none"
    triggers = ("scaler",)
    reported_on = "the `zero_grad()` call"

    def check(self, model) -> Iterable[Finding]:
        from ..model.flow.queries import zero_grads_before_step

        for node, scaler, opt in zero_grads_before_step(model):
            site = model.call_of[node]
            yield Finding(
                node=node,
                stmt=site.stmt,
                message=self.message.format(call=call_text(model, site), scaler=display_key(scaler), opt=display_key(opt)),
            )
