from __future__ import annotations

from typing import Iterable

from . import edits
from .base import Finding, Rule


class DeprecatedAmpNamespace(Rule):
    """## What it does
    Checks for the device-specific AMP names that PyTorch deprecated in favour of
    `torch.amp`: `torch.cuda.amp.autocast`, `torch.cuda.amp.GradScaler`,
    `torch.cuda.amp.custom_fwd`, `torch.cuda.amp.custom_bwd`, `torch.cpu.amp.autocast` and
    `torch.cpu.amp.GradScaler`, in every spelling (`import torch.cuda.amp as amp`,
    `from torch.cuda import amp`, `from torch.cuda.amp import autocast, GradScaler`, the
    `autocast_mode` / `grad_scaler` submodules).

    Each reference is reported once, on the name itself: the name in a `from ... import`
    line, and every use of an imported name or alias (a module import such as `from
    torch.cuda import amp` is not a reference by itself). References inside
    version-compatibility code (an `except ImportError` fallback, a branch of a
    torch-version or `hasattr` test, the fallback after `if <version test>: return ...`) are
    not reported.

    ## Why is this bad?
    Since torch 2.4 every construction or decoration emits a `FutureWarning` (the names still
    work in 2.13), and they will be removed. The migration is not a rename: the parameter
    orders differ. The old `autocast(enabled, dtype, cache_enabled)` becomes
    `torch.amp.autocast(device_type, dtype, enabled, cache_enabled)`, so a naive
    `torch.amp.autocast("cuda", False)` passes `False` as the dtype and raises `TypeError`;
    the old `GradScaler(init_scale, ...)` becomes `torch.amp.GradScaler(device, init_scale,
    ...)`, so `torch.amp.GradScaler(1024.0)` silently takes 1024.0 as the device and keeps
    the default scale of 65536.

    ## Example
    ```python
    import torch

    scaler = torch.cuda.amp.GradScaler(1024.0)
    with torch.cuda.amp.autocast(False):
        loss = model(x)
    ```

    ## Use instead
    ```python
    import torch

    scaler = torch.amp.GradScaler("cuda", init_scale=1024.0)
    with torch.amp.autocast("cuda", enabled=False):
        loss = model(x)
    ```

    ## Known problems
    A compatibility branch chosen by anything other than a version test, `hasattr` or an
    import error (a configuration flag, a vendor-device test) is reported like any other
    use. A name bound by several imports (`try: from torch.amp import GradScaler` /
    `except ImportError: from torch.cuda.amp import GradScaler`) is not reported at its uses,
    since which import wins depends on the installed torch. A deprecated name that is only an
    entry of a table or an operand of a comparison (`if func in [torch.cuda.amp.autocast,
    ...]`, as in torch's own dynamo) recognises the API rather than uses it and is not
    reported; `isinstance(x, (torch.cuda.amp.GradScaler, ...))` is.

    ## Fix safety
    The safe fix rewrites each use to the `torch.amp` call with the device of the old
    namespace and turns every positional argument into a keyword:
    `torch.cuda.amp.autocast(False)` becomes `torch.amp.autocast("cuda", enabled=False)`,
    `torch.cuda.amp.GradScaler(1024.0)` becomes `torch.amp.GradScaler("cuda",
    init_scale=1024.0)`, and `@torch.cuda.amp.custom_fwd` becomes
    `@torch.amp.custom_fwd(device_type="cuda")`. Uses of a from-imported name or of a module
    alias (`autocast()`, `amp.GradScaler()`) are rewritten the same way, through `torch.amp`
    (adding `import torch` before the old import when `torch` is bound nowhere in the file),
    so each fix stands on its own. Once nothing uses a deprecated `from` import any more,
    removing it is offered as an unsafe fix: another module may import the name from this
    one. No fix is offered for a name used as a value (passed, aliased, a base class,
    `isinstance`, an annotation), for calls with `*args`/`**kwargs`, or for calls whose
    arguments are already wrong (`torch.cuda.amp.autocast("cuda")`, AMP102). The
    replacements need torch 2.4 or later, the release that deprecated the old names; the
    only behavioural difference is that `dtype` and `cache_enabled` now default to the
    values set with `torch.set_autocast_dtype` / `torch.set_autocast_cache_enabled`
    (float16 and True unless changed). In a project that targets an older torch
    (`target-torch-version`, or a declared requirement such as `torch==2.2.2`), the rewrites
    are unsafe fixes: `--fix` leaves them, `--unsafe-fixes` applies them.

    ## References
    - [pytorch/pytorch#126527: deprecate the device-specific GradScaler and autocast API](https://github.com/pytorch/pytorch/pull/126527)
    - [`torch.amp.autocast`](https://pytorch.org/docs/stable/amp.html#torch.autocast)
    - [`torch.amp.GradScaler`](https://pytorch.org/docs/stable/amp.html#torch.amp.GradScaler)
    """

    code = "AMP101"
    name = "deprecated-amp-namespace"
    message = "`{old}` is deprecated: use `{new}`"
    fix_title = "Use `torch.amp` with the device, passing the old positional arguments by keyword"
    fix_availability = "sometimes"
    triggers = ("deprecated_amp",)
    reported_on = "each reference to a deprecated name (import alias or use)"

    def check(self, model) -> Iterable[Finding]:
        from ..model import autocast_facts as AF

        for ref, dev, sym, exact in AF.deprecated_references(model):
            fix = edits.deprecation_fix(model, ref, dev, sym) if exact else None
            if fix is not None and fix.applicability == "safe" and _targets_before_2_4(self.options):
                fix = fix._replace(applicability="unsafe")  # the replacements need torch >= 2.4
            yield Finding(
                node=ref.node,
                stmt=ref.stmt,
                message=self.message.format(old=_old_name(ref.qual, sym), new=AF.replacement(sym, dev)),
                fix=fix,
            )


def _targets_before_2_4(options) -> bool:
    """``target-torch-version`` (or the project's declared torch requirement) is below 2.4."""
    target = getattr(options, "target_torch_version", None)
    return target is not None and tuple(target) < (2, 4)


def _old_name(qual: str, sym: str) -> str:
    ns = "torch.cuda.amp" if qual.startswith("torch.cuda.amp") else "torch.cpu.amp"
    return f"{ns}.{sym}"
