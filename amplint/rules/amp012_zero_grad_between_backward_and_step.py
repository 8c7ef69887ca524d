from __future__ import annotations

import re
from typing import Iterable

from ._sequence import display_key
from .base import Finding, Rule
from .common import call_text

_OPT_NAME = re.compile(r"opt|optim", re.I)


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
        steps = model.observations("step")
        opts_of: dict[str, set] = {}
        for obs in steps:
            opts_of.setdefault(obs.scaler, set()).add(obs.opt)
        opt_texts = model.flow.opt_texts
        seen: set[int] = set()
        for obs in steps:
            for st in obs.states:
                if st.speculative:
                    continue
                for node, rkey in st.zeroed_of(obs.scaler):
                    if id(node) in seen:
                        continue
                    site = model.call_of.get(node)
                    if site is None:
                        continue
                    if not _same_optimizer(site, rkey, obs.opt, opts_of[obs.scaler], opt_texts):
                        continue
                    seen.add(id(node))
                    yield Finding(
                        node=node,
                        stmt=site.stmt,
                        message=self.message.format(
                            call=call_text(model, site), scaler=display_key(obs.scaler), opt=display_key(obs.opt)
                        ),
                    )


def _same_optimizer(site, rkey, opt, stepped: set, opt_texts) -> bool:
    recv = site.recv
    if recv is None:
        return False
    last = recv.rsplit(".", 1)[-1]
    if recv in opt_texts or _OPT_NAME.search(last):
        return rkey == opt
    # ``model.zero_grad()``: only when the scaler steps one optimizer
    return len(stepped) == 1 and not any(o is None or o.startswith("?") for o in stepped)
