from __future__ import annotations

from typing import Iterable

from . import edits
from .base import Finding, Rule


class ScalerDeviceMismatch(Rule):
    """## What it does
    Checks for a `torch.amp.GradScaler` whose device is not the one the code trains on:

    - `torch.amp.GradScaler()` (or `torch.GradScaler()`) without a device, in a file whose
      autocast regions are all literally `"cpu"`: the device defaults to `"cuda"`;
    - a number in the device position, `torch.amp.GradScaler(1024.0)`: a leftover from
      `torch.cuda.amp.GradScaler(init_scale)`, whose first parameter was the initial scale; also
      a parameter with a numeric default (`def make_scaler(init_scale=2.0**16):
      return torch.amp.GradScaler(init_scale)`) that no caller in the file sets otherwise.

    The finding is reported on the `GradScaler(...)` constructor call.

    ## Why is this bad?
    A `"cuda"` scaler on a host without CUDA warns once (`GradScaler is enabled, but CUDA is
    not available.  Disabling.`) and then does nothing: `scale()` returns the loss unchanged
    and `get_scale()` is 1.0, so an fp16 CPU loop runs without loss scaling, its small
    gradients flush to zero (a third of the weight-gradient entries at a loss of order 1e-5)
    and every other scaler misuse is hidden. With `GradScaler(1024.0)` the number becomes the
    device and the initial scale silently stays at the default 65536.

    The deprecated `torch.cuda.amp.GradScaler(1024.0)` is not reported: there the first
    parameter really is the initial scale.

    ## Example
    ```python
    scaler = torch.amp.GradScaler()
    for x, y in loader:
        with torch.autocast("cpu", dtype=torch.float16):
            loss = criterion(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()

    scaler = torch.amp.GradScaler(1024.0)
    ```

    ## Use instead
    ```python
    scaler = torch.amp.GradScaler("cpu")
    for x, y in loader:
        with torch.autocast("cpu", dtype=torch.float16):
            loss = criterion(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()

    scaler = torch.amp.GradScaler(init_scale=1024.0)
    ```

    ## Known problems
    Only literal autocast devices are compared: a file whose autocast device comes from a
    variable, or that also autocasts on CUDA, is not reported. A constructor with
    `enabled=False` is not reported.

    ## Fix safety
    Moving the numbers of the old positional order to keywords (`GradScaler(1024.0)` ->
    `GradScaler(init_scale=1024.0)`) is a safe fix: the scaler keeps the device it had (the
    default) and gets the initial scale that was meant. Adding `"cpu"` to a scaler without a
    device is offered as an unsafe fix: the same code may be meant to run on a GPU host too.

    ## References
    - [`torch.amp.GradScaler`](https://pytorch.org/docs/stable/amp.html#torch.amp.GradScaler)
    - [Deprecation of `torch.cuda.amp.GradScaler(args...)`](https://github.com/pytorch/pytorch/pull/126527)
    """

    code = "AMP016"
    name = "scaler-device-mismatch"
    message = "`{ctor}` without a device defaults to \"cuda\", but this file autocasts on \"cpu\""
    fix_title = "Pass the device explicitly"
    fix_availability = "sometimes"
    triggers = ("grad_scaler_name",)
    reported_on = "the `GradScaler(...)` constructor call"

    NUMERIC = "`{ctor}({value})` passes {value} as the device, not the initial scale"

    def check(self, model) -> Iterable[Finding]:
        from ..model.arguments import autocast_cpu_only, numeric_device
        from ..model.usage import facts

        ctors = facts(model).ctors
        cpu_only = autocast_cpu_only(model) if ctors else False
        for c in ctors:
            if c.family not in ("device_first", "sharded") or c.enabled is False:
                continue
            site = c.site
            head = model.code_for(site.node.func)
            number = numeric_device(model, c)
            if number is not None:
                yield Finding(node=site.node, stmt=site.stmt,
                              message=self.NUMERIC.format(ctor=head, value=model.code_for(number)),
                              fix=edits.init_scale_by_keyword(model, c, head))
            elif cpu_only and not site.positional() and site.keyword("device") is None \
                    and not any(a.star for a in site.node.args):
                args = edits.arg_texts(model, site.node)
                fix = None if args is None else edits.replace(
                    site.node, edits.render_call(head, [(None, '"cpu"')] + args), 'Create the scaler for "cpu"', "unsafe")
                yield Finding(node=site.node, stmt=site.stmt, message=self.message.format(ctor=head + "()"), fix=fix)
