from __future__ import annotations

from typing import Iterable

from . import edits
from .base import Finding, Rule

_MESSAGES = {
    "no_device": "`{callee}()` needs a device type: `{callee}(\"cuda\", ...)`",
    "bad_device": "`{data}` is not a device type: use \"cuda\", \"cpu\", \"xpu\", ...",
    "literal_device": "`{text}` is taken as the device type, which must be a string like \"cuda\"",
    "device_call": "`device_type` must be a string, not a `torch.device`: raises ValueError",
    "device_value": "`{text}` holds a `torch.device`, but `device_type` must be a string: use `{text}.type`",
    "device_param": "`{text}` receives a `torch.device` from every caller in this file, but `device_type` must be a "
                    "string: use `{text}.type`",
    "bool_dtype": "The second positional argument of `{callee}` is `dtype`, not `enabled`: `{text}` raises TypeError",
    "other_dtype": "`{text}` is not an autocast dtype: autocast warns and disables itself "
                   "(use `torch.float16`, `torch.bfloat16`, or `enabled=False`)",
    "literal_dtype": "`dtype` must be a `torch.dtype` such as `torch.float16`, not `{text}`",
    "no_device_type": "`{callee}` needs `device_type` (a required keyword): raises TypeError",
}


class AutocastBadArguments(Rule):
    """## What it does
    Checks the literal arguments of `torch.autocast` / `torch.amp.autocast`, and of
    `torch.amp.custom_fwd` / `custom_bwd`, for values that cannot work:

    - a device type that is not a string: `torch.autocast(torch.device("cuda"))`, a name or
      attribute that only ever holds a `torch.device(...)` (`self.device`), `torch.autocast(True)`, a missing device, or a bare
      `@torch.autocast` decorator (also a bare `@torch.cuda.amp.autocast`, which is never
      called);
    - a string that names no device type: `torch.autocast("gpu")`;
    - a dtype autocast does not support (`dtype=torch.float32`, `torch.float64`, an integer
      type, a string), or a boolean in the dtype position (`torch.autocast("cuda", False)`);
      for the deprecated `torch.cuda.amp.autocast`, a string or a dtype in its first
      position, which is `enabled`;
    - `torch.amp.custom_fwd` / `custom_bwd` without `device_type`, bare decorators included.

    The finding is reported on the offending argument (or on the call or decorator when the
    argument is missing). Variables are never reported: `torch.autocast(device.type)` and
    `torch.autocast(device_type=dev)` are fine.

    ## Why is this bad?
    Each case fails on the CPU as on the GPU: a `torch.device` or a boolean as the device
    raises `ValueError: Expected device_type of type str`; `"gpu"` raises `RuntimeError:
    Expected one of cpu, cuda, ... device type`; a boolean in the dtype position raises
    `TypeError: set_autocast_dtype(): argument 'dtype' must be torch.dtype, not bool` when
    the region is entered; `custom_fwd` without `device_type` raises `TypeError` when the
    class is defined. An unsupported dtype is worse: autocast warns "the target dtype is not
    supported. Disabling autocast" and the whole region silently runs in float32.

    ## Example
    ```python
    with torch.autocast(torch.device("cuda"), dtype=torch.float16):
        out = model(x)
    with torch.autocast("cuda", False):
        out = model(x)
    ```

    ## Use instead
    ```python
    with torch.autocast("cuda", dtype=torch.float16):
        out = model(x)
    with torch.autocast("cuda", enabled=False):
        out = model(x)
    ```

    ## Known problems
    Only literal values, names and attributes whose every binding is a `torch.device(...)`
    call, and parameters that every caller in the same file passes such a device are checked;
    a device that comes from configuration or from another module is not reported. Device types of out-of-tree backends that amplint
    does not know are reported as unknown; add a `# noqa: AMP102` there.

    ## Fix safety
    Two safe fixes: `torch.device("cuda")` (a string literal inside) becomes `"cuda"`, and a
    name or attribute bound only to `torch.device(...)` calls becomes `name.type`; a positional boolean
    in the dtype position becomes `enabled=<bool>`, keeping the device. For a parameter, the
    same `name.type` fix is unsafe: a caller in another module may pass a string. The other
    cases need a human to choose the device or dtype.

    ## References
    - [`torch.autocast`](https://pytorch.org/docs/stable/amp.html#torch.autocast)
    - [`torch.amp.custom_fwd`](https://pytorch.org/docs/stable/amp.html#torch.amp.custom_fwd)
    """

    code = "AMP102"
    name = "autocast-bad-arguments"
    message = "Bad autocast argument"
    fix_title = "Pass the device type as a string and flags by keyword"
    fix_availability = "sometimes"
    triggers = ("autocast", "custom_fwd")
    screen = "autocast_args"
    reported_on = "the offending argument, or the call or decorator when the argument is missing"

    def check(self, model) -> Iterable[Finding]:
        from ..model.arguments import autocast_problems

        for p in autocast_problems(model):
            yield Finding(node=p.node, stmt=p.stmt, message=_message(model, p), fix=_fix(model, p))


def _message(model, p) -> str:
    if p.kind == "bare_decorator":
        text = model.code_for(p.node)
        if p.data.startswith(("torch.amp.custom", "torch.amp.autocast_mode.custom")):
            return f"`@{text}` needs `device_type` (a required keyword): raises TypeError when the class is defined"
        example = f"{text}()" if p.data.startswith(("torch.cuda.", "torch.cpu.")) else f'{text}("cuda")'
        return f"`@{text}` must be called: `@{example}`"
    if p.kind == "old_enabled":
        ns = "torch.cuda.amp" if p.site.qual.startswith("torch.cuda") else "torch.cpu.amp"
        what = "a dtype" if p.data == "dtype" else "the device"
        return (f"The first positional argument of `{ns}.autocast` is `enabled`, not {what}: "
                f"`{model.code_for(p.node)}` raises TypeError")
    value = p.node.value if p.kind == "bool_dtype" else p.node
    callee = model.code_for(p.site.node.func)
    return _MESSAGES[p.kind].format(callee=callee, data=p.data, text=model.code_for(value))


def _fix(model, p):
    text = model.code_for(p.node.value if p.kind == "bool_dtype" else p.node)
    if p.kind == "device_call" and p.data is not None:
        return edits.replace(p.node, f'"{p.data}"', f'Pass the device type "{p.data}"')
    if p.kind in ("device_value", "device_param"):
        return edits.replace(p.node, f"{text}.type", f"Pass `{text}.type`", "safe" if p.kind == "device_value" else "unsafe")
    if p.kind == "bool_dtype" and p.data:
        return edits.replace(p.node, f"enabled={text}", f"Pass `enabled={text}`")
    return None
