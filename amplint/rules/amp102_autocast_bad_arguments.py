from __future__ import annotations

from typing import Iterable

from .base import Finding, FixPlan, NodeEdit, Rule


class AutocastBadArguments(Rule):
    """## What it does
    Checks the literal arguments of `torch.autocast` / `torch.amp.autocast`, and of
    `torch.amp.custom_fwd` / `custom_bwd`, for values that cannot work:

    - a device type that is not a string: `torch.autocast(torch.device("cuda"))`, a name
      bound only to `torch.device(...)`, `torch.autocast(True)`, a missing device, or a bare
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
    Only literal values, names bound only to a `torch.device(...)` call in the same scope,
    and parameters that every caller in the same file passes such a device are checked; a device held by an attribute (`self.device`) may be a string or a
    `torch.device` and is not reported. Device types of out-of-tree backends that amplint
    does not know are reported as unknown; add a `# noqa: AMP102` there.

    ## Fix safety
    Two safe fixes: `torch.device("cuda")` (a string literal inside) becomes `"cuda"`, and a
    name bound only to a `torch.device(...)` call becomes `name.type`; a positional boolean
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
        import libcst as cst

        from ..model import autocast_facts as AF

        for site in model.calls:
            q = site.qual
            if q is None:
                continue
            if q in AF.NEW_AUTOCAST or q in AF.DEPRECATED_AUTOCAST or q in AF.NEW_CUSTOM_FWD or q in AF.NEW_CUSTOM_BWD:
                if isinstance(site.node.func, cst.Name) and _ambiguous(model, site.node.func.value):
                    continue
                if q in AF.NEW_AUTOCAST:
                    yield from _new_autocast(model, site)
                elif q in AF.DEPRECATED_AUTOCAST:
                    yield from _old_autocast(model, site, q)
                else:
                    yield from _custom(model, site.node, site.stmt, q)
        # bare decorators: ``@torch.autocast``, ``@torch.amp.custom_fwd``
        for f in model.functions:
            if f.is_module:
                continue
            for dec in f.node.decorators:
                d = dec.decorator
                if not isinstance(d, (cst.Name, cst.Attribute)):
                    continue
                q = model.imports.qualify(d)
                if q is None or (isinstance(d, cst.Name) and _ambiguous(model, d.value)):
                    continue
                if q in AF.NEW_AUTOCAST or q in AF.DEPRECATED_AUTOCAST:
                    text = model.code_for(d)
                    yield Finding(node=d, stmt=None, message=f"`@{text}` must be called: `@{_example_call(q, text)}`")
                elif q in AF.NEW_CUSTOM_FWD or q in AF.NEW_CUSTOM_BWD:
                    text = model.code_for(d)
                    yield Finding(node=d, stmt=None, message=f"`@{text}` needs `device_type` (a required keyword): raises TypeError when the class is defined")


def _example_call(q: str, text: str) -> str:
    return f"{text}()" if q.startswith(("torch.cuda.", "torch.cpu.")) else f'{text}("cuda")'


def _ambiguous(model, name: str) -> bool:
    """A name bound by several imports (a version fallback): which one runs is unknown."""
    from ..model import autocast_facts as AF

    return len(AF.tree(model).import_quals(name)) > 1


def _new_autocast(model, site) -> Iterable[Finding]:
    import libcst as cst

    from ..model import autocast_facts as AF
    from ..model.syntax import dtype_kind, literal_value

    call = site.node
    if AF.has_star(call):
        return
    callee = model.code_for(call.func)
    dev = AF.arg_node(call, 0, "device_type")
    if dev is None:
        yield Finding(node=call, stmt=site.stmt, message=f"`{callee}()` needs a device type: `{callee}(\"cuda\", ...)`")
        return
    v = dev.value
    lit = literal_value(v)
    if isinstance(v, cst.SimpleString) and isinstance(lit, str):
        kind = lit.split(":", 1)[0]
        if kind not in AF.DEVICE_TYPES:
            yield Finding(node=v, stmt=site.stmt, message=f"`{v.value}` is not a device type: use \"cuda\", \"cpu\", \"xpu\", ...")
    elif isinstance(lit, (bool, int, float)) or (lit is None and isinstance(v, cst.Name)):
        yield Finding(node=v, stmt=site.stmt, message=f"`{model.code_for(v)}` is taken as the device type, which must be a string like \"cuda\"")
    elif isinstance(v, cst.Call) and AF.qual_of(model, v.func) == "torch.device":
        yield Finding(node=v, stmt=site.stmt, message="`device_type` must be a string, not a `torch.device`: raises ValueError",
                      fix=_device_call_fix(model, v))
    elif isinstance(v, cst.Name) and _only_device_bindings(model, site.func, v.value):
        yield Finding(node=v, stmt=site.stmt,
                      message=f"`{v.value}` holds a `torch.device`, but `device_type` must be a string: use `{v.value}.type`",
                      fix=FixPlan("safe", f"Pass `{v.value}.type`", [NodeEdit("replace", v, f"{v.value}.type")]))
    elif isinstance(v, cst.Name) and _device_parameter(model, site.func, v.value):
        # callers in other modules might pass a string: the fix is unsafe there
        yield Finding(node=v, stmt=site.stmt,
                      message=f"`{v.value}` receives a `torch.device` from every caller in this file, but `device_type` "
                              f"must be a string: use `{v.value}.type`",
                      fix=FixPlan("unsafe", f"Pass `{v.value}.type`", [NodeEdit("replace", v, f"{v.value}.type")]))
    dt = AF.arg_node(call, 1, "dtype")
    if dt is None:
        return
    dv = literal_value(dt.value)
    if dt.keyword is None and isinstance(dv, bool):
        pos = [a for a in call.args if a.keyword is None]
        fix = None
        if len(pos) == 2 and AF.arg_node(call, 99, "enabled") is None:
            fix = FixPlan("safe", f"Pass `enabled={dv}`", [NodeEdit("replace", dt, f"enabled={model.code_for(dt.value)}")])
        yield Finding(node=dt.value, stmt=site.stmt,
                      message=f"The second positional argument of `{callee}` is `dtype`, not `enabled`: `{dv}` raises TypeError",
                      fix=fix)
        return
    yield from _bad_dtype(model, site, dt.value, dtype_kind(dt.value, model.imports))


def _bad_dtype(model, site, node, kind) -> Iterable[Finding]:
    import libcst as cst

    if kind == "other":
        yield Finding(node=node, stmt=site.stmt,
                      message=f"`{model.code_for(node)}` is not an autocast dtype: autocast warns and disables itself "
                              "(use `torch.float16`, `torch.bfloat16`, or `enabled=False`)")
    elif isinstance(node, (cst.SimpleString, cst.Integer, cst.Float, cst.ConcatenatedString)):
        yield Finding(node=node, stmt=site.stmt,
                      message=f"`dtype` must be a `torch.dtype` such as `torch.float16`, not `{model.code_for(node)}`")


def _old_autocast(model, site, qual: str) -> Iterable[Finding]:
    import libcst as cst

    from ..model import autocast_facts as AF
    from ..model.syntax import dtype_kind

    call = site.node
    if AF.has_star(call):
        return
    ns = "torch.cuda.amp" if qual.startswith("torch.cuda") else "torch.cpu.amp"
    en = AF.arg_node(call, 0, "enabled")
    if en is not None and en.keyword is None:
        v = en.value
        q = AF.qual_of(model, v)
        is_dtype = q is not None and dtype_kind(v, model.imports) in ("float16", "bfloat16", "other")
        if isinstance(v, (cst.SimpleString, cst.ConcatenatedString)) or is_dtype:
            yield Finding(node=v, stmt=site.stmt,
                          message=f"The first positional argument of `{ns}.autocast` is `enabled`, not "
                                  f"{'a dtype' if is_dtype else 'the device'}: `{model.code_for(v)}` raises TypeError")
            return
    dt = AF.arg_node(call, 1, "dtype")
    if dt is not None:
        yield from _bad_dtype(model, site, dt.value, dtype_kind(dt.value, model.imports))


def _custom(model, call, stmt, qual: str) -> Iterable[Finding]:
    from ..model import autocast_facts as AF

    if AF.has_star(call) or AF.arg_node(call, 99, "device_type") is not None:
        return
    text = model.code_for(call.func)
    yield Finding(node=call, stmt=stmt, message=f"`{text}` needs `device_type` (a required keyword): raises TypeError")


def _device_call_fix(model, v) -> FixPlan | None:
    import libcst as cst

    from ..model import autocast_facts as AF
    from ..model.syntax import literal_value

    if AF.has_star(v) or not v.args or v.args[0].keyword is not None:
        return None
    if any(a.keyword is not None and a.keyword.value not in ("index",) for a in v.args):
        return None
    if len([a for a in v.args if a.keyword is None]) > 2:
        return None
    first = v.args[0].value
    lit = literal_value(first)
    if not isinstance(first, cst.SimpleString) or not isinstance(lit, str):
        return None
    kind = lit.split(":", 1)[0]
    if kind not in AF.DEVICE_TYPES:
        return None
    return FixPlan("safe", f'Pass the device type "{kind}"', [NodeEdit("replace", v, f'"{kind}"')])


def _only_device_bindings(model, func, name: str) -> bool:
    """Every binding of ``name`` visible from ``func`` is ``name = torch.device(...)``."""
    import libcst as cst

    from ..model import autocast_facts as AF

    if AF.shadowed(func, name):
        return False
    scope = func if func.is_local(name) else model.top
    if scope is not func and name in func.assigned:
        return False
    found = False
    for a in model.assignments:
        if a.func is not scope or name not in a.targets:
            continue
        v = a.value
        if not (isinstance(v, cst.Call) and AF.qual_of(model, v.func) == "torch.device") or len(a.targets) != 1:
            return False
        found = True
    if not found:
        return False
    return not _other_bindings(scope.node, name)


def _device_parameter(model, func, name: str) -> bool:
    """``name`` is a parameter of ``func`` that the function never rebinds, and every call of
    ``func`` in this file (at least one) passes it a ``torch.device(...)`` call or a name bound
    only to one: ``def train(model, device): ... torch.autocast(device)`` called as
    ``train(model, torch.device("cuda"))``."""
    import libcst as cst

    from ..model import autocast_facts as AF

    if name not in func.params or name in func.assigned or _other_bindings(func.node, name):
        return False
    is_method = bool(func.params) and func.params[0] in ("self", "cls")
    index = func.params.index(name) - (1 if is_method else 0)
    found = False
    for caller in model.functions:
        for c in caller.calls:
            if model.callee_of(c) is not func:
                continue
            arg = None
            for i, a in enumerate(c.node.args):
                if a.star:
                    return False
                if a.keyword is not None and a.keyword.value == name:
                    arg = a
                elif a.keyword is None and i == index and name not in func.kwonly:
                    arg = a
            if arg is None:
                return False  # the default (or something we cannot see) is used
            value = arg.value
            if isinstance(value, cst.Call) and AF.qual_of(model, value.func) == "torch.device":
                found = True
            elif isinstance(value, cst.Name) and caller is not func and _only_device_bindings(model, caller, value.value):
                found = True
            else:
                return False
    return found


def _other_bindings(root, name: str) -> bool:
    """``name`` is bound by a for/with/except/walrus/import/def/augmented assignment in ``root``
    (not descending into nested functions and classes below the root)."""
    import libcst as cst

    from ..model.syntax import children

    stack = list(root.body.body) if isinstance(root, cst.FunctionDef) and isinstance(root.body, cst.IndentedBlock) else (
        list(root.body) if isinstance(root, cst.Module) else [root])
    while stack:
        n = stack.pop()
        targets = []
        if isinstance(n, (cst.For, cst.CompFor)):
            targets.append(n.target)
        elif isinstance(n, cst.AsName):
            targets.append(n.name)
        elif isinstance(n, cst.NamedExpr):
            targets.append(n.target)
        elif isinstance(n, cst.AugAssign):
            targets.append(n.target)
        elif isinstance(n, (cst.Import, cst.ImportFrom)) and not isinstance(n.names, cst.ImportStar):
            for al in n.names:
                if al.asname is None and (cst.ensure_type(al.name, cst.Name).value if isinstance(al.name, cst.Name) else None) == name:
                    return True
        elif isinstance(n, (cst.FunctionDef, cst.ClassDef)):
            if n.name.value == name:
                return True
            continue
        for t in targets:
            stack2 = [t]
            while stack2:
                x = stack2.pop()
                if isinstance(x, cst.Name) and x.value == name:
                    return True
                if isinstance(x, (cst.Tuple, cst.List)):
                    stack2.extend(e.value for e in x.elements)
                elif isinstance(x, cst.StarredElement):
                    stack2.append(x.value)
        stack.extend(children(n))
    return False
