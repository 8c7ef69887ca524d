from __future__ import annotations

from typing import Iterable

from . import edits
from .base import Finding, Rule
from .common import related_at


class Fp16ParamsWithScaler(Rule):
    """## What it does
    Checks for `.half()`, `.to(torch.float16)` or `.to(dtype=torch.half)` on a module that is
    trained through a GradScaler: its parameters feed an optimizer that `scaler.step()` steps,
    or (when the optimizer comes from the caller) the same function calls the module and
    steps the scaler after converting it.

    The finding is reported on the conversion call.

    ## Why is this bad?
    GradScaler expects fp32 parameters (master weights) with autocast doing the fp16 math.
    With fp16 parameters the gradients are fp16 too, and the first `scaler.step()` (or
    `unscale_`) raises `ValueError: Attempting to unscale FP16 gradients.` Training fp16
    weights without a scaler is no better: small updates are lost to rounding (at lr 1e-5 the
    parameters moved half as far as with fp32 master weights; in fp16, 1 + 1e-4 == 1).

    Not reported: conversions of a copy (`deepcopy(model).half()`, the usual way to save a
    small checkpoint), of a module that is frozen (`requires_grad_(False)`, `eval()`) or only
    evaluated, conversions undone in the same expression (`model.half().float()`), tensors,
    conversions under an `if`, conversions after the training loop, and models stepped by
    FSDP's `ShardedGradScaler`, which accepts fp16 gradients.

    ## Example
    ```python
    model = Net().cuda().half()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    scaler = torch.amp.GradScaler("cuda")
    ```

    ## Use instead
    ```python
    model = Net().cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    scaler = torch.amp.GradScaler("cuda")
    # forward passes under torch.autocast("cuda", dtype=torch.float16)
    ```

    ## Known problems
    The link between a module and its optimizer is made by name (`model.parameters()` in the
    optimizer constructor, `scaler.step(optimizer)`); a model and optimizer built by other
    modules are seen only through the function that trains them. A module put in `eval()`
    mode and never back in `train()` mode counts as frozen (a teacher) unless an optimizer
    the scaler steps is known to hold its parameters. A conversion under an `if` is reported
    only when the condition is the flag that enables the scaler (`if cfg.fp16:` beside
    `GradScaler(enabled=cfg.fp16)`, in the same module), or a configuration constant that is
    always true.

    ## Fix safety
    Removing the conversion is offered as an unsafe fix: the fp16 weights may be intended
    (for memory), and then the fix is to drop the GradScaler or move to autocast, which needs
    a human.

    ## References
    - [AMP: "Don't call `.half()` on your model(s) or inputs when using autocasting"](https://pytorch.org/docs/stable/amp.html#autocasting)
    - [AMP examples: typical mixed precision training](https://pytorch.org/docs/stable/notes/amp_examples.html)
    """

    code = "AMP014"
    name = "fp16-params-with-scaler"
    message = "`{call}` makes the parameters of `{module}` fp16, but a GradScaler steps them: keep fp32 weights and use autocast"
    fix_title = "Remove the fp16 conversion"
    fix_availability = "sometimes"
    triggers = ("scaler",)
    reported_on = "the `.half()` / `.to(torch.float16)` call"

    def check(self, model) -> Iterable[Finding]:
        from ..model.modules import fp16_conversions_of_trained_modules

        for site, keys, ctors in fp16_conversions_of_trained_modules(model):
            yield Finding(
                node=site.node,
                stmt=site.stmt,
                message=self.message.format(call=_short(model, site), module=keys[-1]),
                fix=edits.remove_fp16_conversion(model, site, self.fix_title),
                related=tuple(r for n in ctors for r in related_at(model, n, "the GradScaler that steps them")),
            )


def _short(model, site) -> str:
    text = " ".join(model.code_for(site.node).split())
    return text if len(text) <= 50 else f".{site.method}(...)"
