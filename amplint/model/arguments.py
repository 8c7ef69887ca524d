"""Arguments of the AMP constructors, read against their signatures (:mod:`amplint.torch_api`)
and the value layer: which argument of an autocast / ``custom_fwd`` / GradScaler call is of the
wrong kind. Each fact is ``Problem(kind, node, stmt, data)``; the rules word them.

autocast (``torch.autocast(device_type, dtype=None, enabled=True, cache_enabled=None)``):

- ``no_device``        no device type at all (``node``: the call);
- ``bad_device``       a string that names no device type (``data``: the string);
- ``literal_device``   a bool, number or None in the device slot;
- ``device_call``      ``torch.device("cuda")`` in the device slot (``data``: the device type, or None);
- ``device_value``     a name or attribute that only ever holds a ``torch.device`` (``self.device``);
- ``device_param``     a parameter every in-file caller hands a ``torch.device``;
- ``bool_dtype``       ``torch.autocast("cuda", False)``: a bool in the dtype slot (``data``: True
                       when the call has exactly two positional arguments and no ``enabled=``);
- ``other_dtype``      a dtype autocast does not support (it warns and disables itself);
- ``literal_dtype``    a string or number as the dtype;
- ``old_enabled``      the deprecated ``torch.cuda.amp.autocast("cuda")`` / ``(torch.float16)``: a
                       string or dtype in the ``enabled`` slot (``data``: "dtype" | "device");
- ``no_device_type``   ``custom_fwd``/``custom_bwd`` without their required ``device_type``;
- ``bare_decorator``   ``@torch.autocast`` / ``@torch.amp.custom_fwd`` used without a call
                       (``data``: the qualified name).

GradScaler (AMP016): :func:`numeric_device` — a number in the device slot of a device-first
constructor, literally or through a parameter with a numeric default that no caller of the file
overrides with something else.
"""

from __future__ import annotations

from typing import NamedTuple

import libcst as cst

from .. import torch_api as T
from .syntax import literal_value


class Problem(NamedTuple):
    kind: str
    node: object
    stmt: object
    data: object = None
    site: object = None  # the call whose argument it is


def arg(call: cst.Call, index: int, name: str) -> cst.Arg | None:
    for a in call.args:
        if a.keyword is not None and a.keyword.value == name:
            return a
    pos = [a for a in call.args if a.keyword is None and not a.star]
    return pos[index] if index < len(pos) else None


def has_star(call: cst.Call) -> bool:
    return any(a.star for a in call.args)


def numeric(node) -> bool:
    """An int/float literal, possibly negated or combined arithmetically (``2.0**16``)."""
    if isinstance(node, (cst.Integer, cst.Float)):
        return True
    if isinstance(node, cst.UnaryOperation):
        return numeric(node.expression)
    if isinstance(node, cst.BinaryOperation):
        return numeric(node.left) and numeric(node.right)
    return False


# --- values handed to parameters by the file's own callers ---------------------------------------


def caller_arguments(model, func, name: str, defaults: bool = False) -> list | None:
    """``(caller, argument expression)`` for every in-file call of ``func`` and its parameter
    ``name``; None when some call passes arguments through ``*``/``**``, or (unless
    ``defaults``) leaves the parameter to its default, or no call exists."""
    if name not in func.params:
        return None
    is_method = bool(func.params) and func.params[0] in ("self", "cls") and func.cls is not None
    index = func.params.index(name) - (1 if is_method else 0)
    out = []
    for c in model.calls:
        if model.callee_of(c) is not func:
            continue
        found = None
        for i, a in enumerate(c.node.args):
            if a.star:
                return None
            if a.keyword is not None and a.keyword.value == name:
                found = a.value
            elif a.keyword is None and i == index and name not in func.kwonly:
                found = a.value
        if found is None:
            if defaults:
                continue
            return None
        out.append((c.func, found))
    return out if out or defaults else None


def _only(model, func, node, kind: str) -> bool:
    vals = model.values.of(func, node)
    return bool(vals) and all(v.kind == kind for v in vals)


def _holds_bool(model, func, node) -> bool:
    """``node`` only ever holds a truth value (``amp: bool``, ``use_amp = x == "cuda"``)."""
    if isinstance(node, (cst.Comparison, cst.UnaryOperation)):
        return bool(model.values.of(func, node)) and all(v.kind == "bool" for v in model.values.of(func, node))
    if not isinstance(node, (cst.Name, cst.Attribute)):
        return False
    vals = model.values.of(func, node)
    known = [v for v in vals if v.kind != "param"]
    return bool(known) and all(v.kind == "bool" or v.kind == "literal" and isinstance(v.data, bool) for v in known)


def holds_device(model, func, node) -> str | None:
    """``"value"`` when ``node`` only ever holds a ``torch.device``; ``"param"`` when it is a
    parameter every in-file caller hands one (callers elsewhere may not); else None."""
    if not isinstance(node, (cst.Name, cst.Attribute)):
        return None
    if _only(model, func, node, "device"):
        return "value"
    if isinstance(node, cst.Name):
        bindings = model.scopes.lookup(func, node.value)
        if len(bindings) == 1 and bindings[0].kind == "param" and bindings[0].func is func:
            args = caller_arguments(model, func, node.value)
            if args and all(_only(model, f, a, "device") for f, a in args):
                return "param"
    return None


# --- autocast ------------------------------------------------------------------------------------


def autocast_problems(model) -> list[Problem]:
    out: list[Problem] = []
    for site in model.calls:
        q = site.qual
        if q is None or isinstance(site.node.func, cst.Name) and _ambiguous(model, site.func, site.node.func.value):
            continue
        if has_star(site.node):
            continue
        if q in T.NEW_AUTOCAST:
            out.extend(_new_autocast(model, site))
        elif q in T.DEPRECATED_AUTOCAST:
            out.extend(_old_autocast(model, site))
        elif q in T.NEW_CUSTOM_FWD or q in T.NEW_CUSTOM_BWD:
            if arg(site.node, 99, "device_type") is None:
                out.append(Problem("no_device_type", site.node, site.stmt, site=site))
    for f in model.functions:
        if f.is_module:
            continue
        for dec in f.node.decorators:
            d = dec.decorator
            if not isinstance(d, (cst.Name, cst.Attribute)):
                continue
            q = model.imports.qualify(d)
            if q is None or (isinstance(d, cst.Name) and _ambiguous(model, f, d.value)):
                continue
            if q in T.AUTOCAST or q in T.NEW_CUSTOM_FWD or q in T.NEW_CUSTOM_BWD:
                out.append(Problem("bare_decorator", d, None, q))
    return out


def _ambiguous(model, func, name: str) -> bool:
    """``name`` is bound by several imports: what it is is unknown. A fallback in an ``except
    ImportError:`` handler does not count (the ``try`` body's import is the one that runs)."""
    fallback = model.fallback_imports
    return len({b.qual for b in model.scopes.lookup(func, name)
                if b.kind == "import" and id(b.node) not in fallback}) > 1


def _new_autocast(model, site):
    call = site.node
    dev = arg(call, 0, "device_type")
    if dev is None:
        yield Problem("no_device", call, site.stmt, site=site)
        return
    v = dev.value
    lit = literal_value(v)
    if isinstance(v, cst.SimpleString) and isinstance(lit, str):
        if lit.split(":", 1)[0] not in T.DEVICE_TYPES:
            yield Problem("bad_device", v, site.stmt, v.value, site=site)
    elif isinstance(lit, (bool, int, float)) or (lit is None and isinstance(v, cst.Name)):
        yield Problem("literal_device", v, site.stmt, site=site)
    elif isinstance(v, cst.Call) and model.imports.qualify(v.func) == T.TORCH_DEVICE:
        first = literal_value(v.args[0].value) if v.args and isinstance(v.args[0].value, cst.SimpleString) else None
        kind = first.split(":", 1)[0] if isinstance(first, str) else None
        plain = (not has_star(v) and v.args and v.args[0].keyword is None
                 and all(a.keyword is None or a.keyword.value == "index" for a in v.args)
                 and len([a for a in v.args if a.keyword is None]) <= 2)
        yield Problem("device_call", v, site.stmt, kind if plain and kind in T.DEVICE_TYPES else None, site=site)
    else:
        held = holds_device(model, site.func, v)
        if held is not None:
            yield Problem("device_value" if held == "value" else "device_param", v, site.stmt, site=site)
    dt = arg(call, 1, "dtype")
    if dt is None:
        return
    dv = literal_value(dt.value)
    if dt.keyword is None and (isinstance(dv, bool) or _holds_bool(model, site.func, dt.value)):
        pos = [a for a in call.args if a.keyword is None]
        yield Problem("bool_dtype", dt, site.stmt, len(pos) == 2 and arg(call, 99, "enabled") is None, site=site)
        return
    yield from _bad_dtype(model, site, dt.value)


def _bad_dtype(model, site, node):
    if T.dtype_kind(model.imports.qualify(node) if isinstance(node, (cst.Name, cst.Attribute)) else None) == "other":
        yield Problem("other_dtype", node, site.stmt, site=site)
    elif isinstance(node, (cst.SimpleString, cst.Integer, cst.Float, cst.ConcatenatedString)):
        yield Problem("literal_dtype", node, site.stmt, site=site)


def _old_autocast(model, site):
    call = site.node
    en = arg(call, 0, "enabled")
    if en is not None and en.keyword is None:
        v = en.value
        q = model.imports.qualify(v) if isinstance(v, (cst.Name, cst.Attribute)) else None
        if T.dtype_kind(q) is not None:
            yield Problem("old_enabled", v, site.stmt, "dtype", site=site)
            return
        if isinstance(v, (cst.SimpleString, cst.ConcatenatedString)):
            yield Problem("old_enabled", v, site.stmt, "device", site=site)
            return
    dt = arg(call, 1, "dtype")
    if dt is not None:
        yield from _bad_dtype(model, site, dt.value)


# --- GradScaler -------------------------------------------------------------------------------------


def numeric_device(model, ctor) -> cst.BaseExpression | None:
    """The first positional argument of a device-first GradScaler constructor when it is a number:
    a literal, or a parameter whose numeric default no in-file caller replaces by a non-number."""
    pos = ctor.site.positional()
    if not pos:
        return None
    v = pos[0].value
    if numeric(v):
        return v
    if isinstance(v, cst.Name):
        func = ctor.site.func
        bindings = model.scopes.lookup(func, v.value)
        if len(bindings) == 1 and bindings[0].kind == "param" and bindings[0].default is not None \
                and numeric(bindings[0].default):
            callers = caller_arguments(model, bindings[0].func, v.value, defaults=True)
            typed = _numeric_annotation(bindings[0].annotation)
            if callers is not None and all(numeric(a) or _numbers(model, f, a) or typed and _not_device(model, f, a)
                                           for f, a in callers):
                return v
    return None


def _numeric_annotation(node) -> bool:
    """``init_scale: float = 2.0**14``: the parameter says what its callers pass."""
    if isinstance(node, cst.Annotation):
        node = node.annotation
    return isinstance(node, cst.Name) and node.value in ("float", "int")


def _not_device(model, func, node) -> bool:
    """Nothing known of the value says device (a string, a ``torch.device``)."""
    return not any(v.kind == "device" or v.kind == "literal" and isinstance(v.data, str)
                   for v in model.values.of(func, node))


def _numbers(model, func, node) -> bool:
    vals = model.values.of(func, node)
    return bool(vals) and all(v.kind == "literal" and isinstance(v.data, (int, float)) and not isinstance(v.data, bool)
                              for v in vals)


def autocast_cpu_only(model) -> bool:
    regions = [r for r in model.regions if r.kind == "autocast" and r.enabled is not False]
    return bool(regions) and all(r.device == "cpu" for r in regions)
