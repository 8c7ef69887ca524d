from __future__ import annotations

from typing import Iterable

from .base import Finding, FixPlan, NodeEdit, Rule


class ScalerDeviceMismatch(Rule):
    """## What it does
    Checks for a `torch.amp.GradScaler` whose device is not the one the code trains on:

    - `torch.amp.GradScaler()` (or `torch.GradScaler()`) without a device, in a file whose
      autocast regions are all literally `"cpu"`: the device defaults to `"cuda"`;
    - a number in the device position, `torch.amp.GradScaler(1024.0)`: a leftover from
      `torch.cuda.amp.GradScaler(init_scale)`, whose first parameter was the initial scale.

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
        from ..model.usage import facts

        ctors = facts(model).ctors
        if not ctors:
            return
        cpu_only = _autocast_cpu_only(model)
        for c in ctors:
            if c.family not in ("device_first", "sharded") or c.enabled is False:
                continue
            site = c.site
            head = model.code_for(site.node.func)
            pos = site.positional()
            from ..model.usage import numeric_literal

            if pos and numeric_literal(pos[0].value):
                value = model.code_for(pos[0].value)
                yield Finding(
                    node=site.node,
                    stmt=site.stmt,
                    message=self.NUMERIC.format(ctor=head, value=value),
                    fix=_numeric_fix(model, c, head),
                )
            elif cpu_only and not pos and site.keyword("device") is None and not any(a.star for a in site.node.args):
                yield Finding(
                    node=site.node,
                    stmt=site.stmt,
                    message=self.message.format(ctor=head + "()"),
                    fix=_cpu_fix(model, site, head),
                )


def _autocast_cpu_only(model) -> bool:
    regions = [r for r in model.regions if r.kind == "autocast" and r.enabled is not False]
    return bool(regions) and all(r.device == "cpu" for r in regions)


def _numeric_fix(model, ctor, head: str) -> FixPlan | None:
    """``GradScaler(a, b, ...)`` in the old order -> keywords (``init_scale=a, growth_factor=b``)."""
    from ..model.usage import INIT_SCALE_FIRST, arg_texts, render_call

    args = arg_texts(model, ctor.site.node)
    if args is None:
        return None
    positional = [v for k, v in args if k is None]
    keywords = [(k, v) for k, v in args if k is not None]
    if ctor.family == "sharded" and len(positional) > 1:
        return None  # ShardedGradScaler swaps growth/backoff: the intent is unclear
    if len(positional) > len(INIT_SCALE_FIRST):
        return None
    named = list(zip(INIT_SCALE_FIRST, positional))
    if {k for k, _ in named} & {k for k, _ in keywords}:
        return None
    text = render_call(head, named + keywords)
    return FixPlan("safe", "Pass the number as `init_scale=`", [NodeEdit("replace", ctor.site.node, text)])


def _cpu_fix(model, site, head: str) -> FixPlan | None:
    from ..model.usage import arg_texts, render_call

    args = arg_texts(model, site.node)
    if args is None:
        return None
    text = render_call(head, [(None, '"cpu"')] + args)
    return FixPlan("unsafe", 'Create the scaler for "cpu"', [NodeEdit("replace", site.node, text)])
