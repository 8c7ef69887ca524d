from __future__ import annotations

from typing import Iterable

from .base import Finding, FixPlan, NodeEdit, Rule


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

        candidates = []
        for ref in model.refs:
            hit = AF.deprecated_symbol(ref.qual)
            if hit is None:
                continue
            candidates.append((ref, hit))
        if not candidates:
            return
        view = AF.tree(model)
        fixer = _Fixer(model, view)
        for ref, (dev, sym, exact) in candidates:
            head = AF.ref_head(ref)
            if head is not None:
                if AF.shadowed(ref.func, head):
                    continue
                quals = view.import_quals(head)
                if len(quals) > 1:
                    continue  # bound by several imports (a compatibility fallback): unknown
            if AF.is_compat_code(model, ref.node) or _mentioned_not_used(view, ref.node):
                continue
            old = _old_name(ref.qual, sym)
            fix = fixer.fix(ref, dev, sym) if exact else None
            if fix is not None and fix.applicability == "safe" and _targets_before_2_4(self.options):
                fix = fix._replace(applicability="unsafe")  # the replacements need torch >= 2.4
            yield Finding(
                node=ref.node,
                stmt=ref.stmt,
                message=self.message.format(old=old, new=AF.replacement(sym, dev)),
                fix=fix,
            )


def _targets_before_2_4(options) -> bool:
    """``target-torch-version`` (or the project's declared torch requirement) is below 2.4."""
    target = getattr(options, "target_torch_version", None)
    return target is not None and tuple(target) < (2, 4)


def _mentioned_not_used(view, node) -> bool:
    """The name is an entry of a table (a list, tuple, set or dict literal) or an operand of a
    comparison (``func in [...]``, ``value is torch.cuda.amp.autocast``): code that recognises
    the deprecated API (torch's own dynamo) rather than uses it. ``isinstance`` / ``issubclass``
    with a tuple of classes is a use: the deprecated subclass misses new-style objects."""
    import libcst as cst

    parent = view.parent_of(node)
    if isinstance(parent, cst.ComparisonTarget) or (isinstance(parent, cst.Comparison) and parent.left is node):
        return True
    if isinstance(parent, (cst.DictElement, cst.StarredDictElement)):
        return True
    if isinstance(parent, cst.Element):
        container = view.parent_of(parent)
        if isinstance(container, (cst.List, cst.Tuple, cst.Set)):
            arg = view.parent_of(container)
            call = view.parent_of(arg) if isinstance(arg, cst.Arg) else None
            if isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value in ("isinstance", "issubclass"):
                return False
            return True
    return False


def _old_name(qual: str, sym: str) -> str:
    ns = "torch.cuda.amp" if qual.startswith("torch.cuda.amp") else "torch.cpu.amp"
    return f"{ns}.{sym}"


class _Fixer:
    """Builds the AMP101 fixes.  Each fix removes its own finding and nothing else: a use is
    rewritten to the fully qualified ``torch.amp`` call (so it no longer depends on the
    deprecated import), and a deprecated ``from`` import is removed once nothing uses it."""

    def __init__(self, model, view) -> None:
        self.model = model
        self.view = view

    def fix(self, ref, dev: str, sym: str) -> FixPlan | None:
        import libcst as cst

        from ..model import autocast_facts as AF

        node = ref.node
        if isinstance(node, cst.ImportAlias):
            return self._remove_import(node)
        if not isinstance(node, (cst.Name, cst.Attribute)):
            return None
        head = AF.ref_head(ref)
        if head is None:
            return None
        extra: list[NodeEdit] = []
        if isinstance(node, cst.Attribute) and self.model.imports.names.get(head) == "torch":
            callee = f"{head}.amp.{sym}"
        elif AF.shadowed(ref.func, "torch"):
            return None
        elif self.view.torch_bound_before(node):
            callee = f"torch.amp.{sym}"
        else:
            line = self._import_line_to_precede(head)
            if line is None:
                return None
            callee = f"torch.amp.{sym}"
            extra.append(NodeEdit("insert_before", line, "import torch"))
        edits = self._use_edits(node, dev, sym, callee)
        if edits is None:
            return None
        return FixPlan("safe", _title(callee, dev, sym), edits + extra)

    # --- one use ------------------------------------------------------------------------

    def _use_edits(self, node, dev: str, sym: str, callee: str) -> list[NodeEdit] | None:
        import libcst as cst

        parent = self.view.parent_of(node)
        if isinstance(parent, cst.Call) and parent.func is node:
            return _call_edits(self.model, parent, dev, sym, callee)
        if isinstance(parent, cst.Decorator) and parent.decorator is node and sym in ("custom_fwd", "custom_bwd"):
            return [NodeEdit("replace", node, f'{callee}(device_type="{dev}")')]
        return None

    def _import_line_to_precede(self, head: str):
        """The top-level import line binding ``head``, when ``torch`` is bound and used nowhere:
        ``import torch`` may then be added right before it."""
        import libcst as cst

        if self.view.bindings.get("torch") or self.view.uses("torch"):
            return None
        bindings = self.view.bindings.get(head, [])
        if len(bindings) != 1:
            return None
        _q, _alias, stmt = bindings[0]
        line = self.view.parent_of(stmt)
        if not isinstance(line, cst.SimpleStatementLine) or line not in self.model.module.body:
            return None
        return line

    # --- the import line ----------------------------------------------------------------

    def _remove_import(self, alias) -> FixPlan | None:
        """Delete a deprecated ``from`` import that nothing in the file uses any more."""
        import libcst as cst

        stmt = self.view.parent_of(alias)
        if not isinstance(stmt, cst.ImportFrom) or isinstance(stmt.names, cst.ImportStar):
            return None
        local = alias.asname.name.value if alias.asname is not None and isinstance(alias.asname.name, cst.Name) else (
            alias.name.value if isinstance(alias.name, cst.Name) else None)
        if local is None or self.view.uses(local) or local in _exported_names(self.model):
            return None
        if len(self.view.bindings.get(local, [])) != 1:
            return None
        title = f"Remove the unused deprecated import of `{local}`"
        names = list(stmt.names)
        if len(names) == 1:
            line = self.view.parent_of(stmt)
            block = self.view.parent_of(line) if line is not None else None
            alone = isinstance(block, cst.Module) or (isinstance(block, cst.IndentedBlock) and len(block.body) > 1)
            if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 and _no_comments(line) and alone:
                return FixPlan("unsafe", title, [NodeEdit("delete_stmt", line)])
            return None
        rest = [a for a in names if a is not alias]
        rest[-1] = rest[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        text = self.model.module.code_for_node(stmt.with_changes(names=rest))
        return FixPlan("unsafe", title, [NodeEdit("replace", stmt, text)])


def _no_comments(line) -> bool:
    tw = line.trailing_whitespace
    return tw.comment is None


def _title(callee: str, dev: str, sym: str) -> str:
    if sym in ("custom_fwd", "custom_bwd"):
        return f'Use `{callee}(device_type="{dev}")`'
    return f'Use `{callee}("{dev}", ...)` with keyword arguments'


def _exported_names(model) -> set[str]:
    import libcst as cst

    out: set[str] = set()
    for a in model.assignments:
        if not a.func.is_module or "__all__" not in a.targets:
            continue
        v = a.value
        if isinstance(v, (cst.List, cst.Tuple, cst.Set)):
            for e in v.elements:
                if isinstance(e.value, cst.SimpleString):
                    try:
                        out.add(str(e.value.evaluated_value))
                    except Exception:  # pragma: no cover
                        pass
        else:
            out.add("*")  # computed __all__: anything may be exported
    if "*" in out:
        out |= {"autocast", "GradScaler", "custom_fwd", "custom_bwd"}
    return out


def _call_edits(model, call, dev: str, sym: str, callee: str | None) -> list[NodeEdit] | None:
    """Rewrite ``old(args)`` to the ``torch.amp`` call: device first, positionals as keywords."""
    from ..model import autocast_facts as AF

    args = list(call.args)
    if any(a.star for a in args):
        return None
    pos = [a for a in args if a.keyword is None]
    kws = [a for a in args if a.keyword is not None]
    if pos and kws and args.index(pos[-1]) > args.index(kws[0]):
        return None  # a positional after a keyword: not valid Python anyway
    new_callee = callee if callee is not None else model.code_for(call.func)
    edits: list[NodeEdit] = []
    if callee is not None:
        edits.append(NodeEdit("replace", call.func, callee))
    if sym in AF.OLD_PARAMS:
        params = AF.OLD_PARAMS[sym]
        if len(pos) > len(params):
            return None
        used = set(params[: len(pos)])
        for k in kws:
            name = k.keyword.value
            if name not in params or name in used:
                return None
            used.add(name)
        if sym == "autocast" and not _plausible_enabled(model, pos[0].value if pos else None):
            return None  # ``autocast("cuda")``: already broken, AMP102 says so
        device = f'"{dev}"'
        if not args:
            return [NodeEdit("replace", call, f"{new_callee}({device})")]
        for i, a in enumerate(pos):
            text = f"{params[i]}={model.code_for(a.value)}"
            if i == 0:
                text = f"{device}, {text}"
            edits.append(NodeEdit("replace", a, text))
        if not pos:
            edits.append(NodeEdit("replace", kws[0].keyword, f"{device}, {kws[0].keyword.value}"))
        return edits
    # custom_fwd(fwd=None, *, cast_inputs=None) / custom_bwd(bwd)
    allowed = {"custom_fwd": ("fwd", "cast_inputs"), "custom_bwd": ("bwd",)}[sym]
    if len(pos) > 1 or any(k.keyword.value not in allowed for k in kws):
        return None
    if sym == "custom_bwd" and len(args) != 1:
        return None
    device = f'device_type="{dev}"'
    if not args:
        return [NodeEdit("replace", call, f"{new_callee}({device})")]
    first = args[0]
    if first.keyword is None:
        edits.append(NodeEdit("replace", first, f"{model.code_for(first.value)}, {device}"))
    else:
        edits.append(NodeEdit("replace", first.keyword, f"{device}, {first.keyword.value}"))
    return edits


def _plausible_enabled(model, node) -> bool:
    """The old first positional (``enabled``) is not a string or a dtype literal."""
    import libcst as cst

    if node is None:
        return True
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
        return False
    if isinstance(node, (cst.Name, cst.Attribute)):
        q = model.imports.qualify(node)
        from ..torch_api import dtype_kind

        if dtype_kind(q) is not None:
            return False
    return True
