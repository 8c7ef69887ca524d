"""Gradient penalties (read by AMP010): `torch.autograd.grad` of a scaled output whose results are
used without dividing by the scale (the function reads no `get_scale()` and no name that holds
the scale factor)."""

from __future__ import annotations

import re

import libcst as cst

from .. import torch_api as T
from .names import dotted_text
from .syntax import children, contains
from .usage import name_uses


def unscaled_grad_penalties(model) -> list:
    """``(autograd.grad site, scaler as written)``: gradients of ``S.scale(...)`` used (not only
    returned) in a function that never reads the scale."""
    out = []
    for site in model.calls:
        if site.qual not in T.AUTOGRAD_GRAD or site.in_lambda:
            continue
        arg = site.arg(0, "outputs")
        if arg is None:
            continue
        scaler = _scaled_by(model, site, arg.value)
        if scaler is None or _reads_scale(model, site.func):
            continue
        targets = _result_names(site)
        if targets is None:
            continue
        if targets:
            uses = [u for u in name_uses(site.func, targets) if not u.store]
            real = [u for u in uses if not (u.parent()[0] is not None and isinstance(u.parent()[0], cst.Return))]
            if not real:
                continue  # only handed back to a caller
        out.append((site, scaler))
    return out

_SCALE_NAME = re.compile(r"^_?(inv_?)?(loss_|grad_|cur_|current_)?scale(_factor|_inv|_value)?$|^inv_", re.I)


_LOG_SINKS = frozenset({"append", "print", "log", "info", "debug", "add_scalar", "add_scalars", "log_metrics", "log_dict"})


def _scaled_by(model, site, value) -> str | None:
    """The scaler text when ``value`` is ``S.scale(...)`` or a local name bound to it."""


    def scale_call(v) -> str | None:
        if isinstance(v, cst.Call) and isinstance(v.func, cst.Attribute) and v.func.attr.value == "scale":
            recv = dotted_text(v.func.value)
            if recv is not None and model.is_scaler(site.func, recv):
                return recv
        return None

    hit = scale_call(value)
    if hit is not None:
        return hit
    if isinstance(value, (cst.List, cst.Tuple)):
        for el in value.elements:
            hit = scale_call(el.value)
            if hit is not None:
                return hit
        return None
    if isinstance(value, cst.Name):
        found = None
        for a in model.assignments:
            if a.func is site.func and value.value in a.targets:
                hit = scale_call(a.value)
                if hit is None:
                    return None  # also bound to something else: unclear
                found = hit
        return found
    return None


def _reads_scale(model, func) -> bool:
    """``func`` reads the scale factor: ``get_scale()``, ``S._scale``, or a name like ``inv_scale``."""
    for c in func.calls:
        if c.method in ("get_scale", "_get_scale_async") and not _logged(model, c):
            return True
    return any(_SCALE_NAME.match(n) for n in _value_names(func))


def _logged(model, site) -> bool:
    """``scales.append(scaler.get_scale())``: the scale is recorded, not used on the gradients."""
    parent = model.parent_call_of(site.node)
    if parent is None or parent.recv_node is site.node:
        return False
    last = (parent.text or "").rsplit(".", 1)[-1]
    return last in _LOG_SINKS


def _value_names(func) -> set[str]:
    """Names and attribute names read in ``func`` (callee attributes excluded: ``S.scale(x)``)."""


    out: set[str] = set()
    stack = list(func.body)
    while stack:
        n = stack.pop()
        if isinstance(n, cst.Name):
            out.add(n.value)
            continue
        if isinstance(n, cst.FunctionDef):
            continue
        if isinstance(n, cst.Call):
            f = n.func
            stack.append(f.value if isinstance(f, cst.Attribute) else f)
            stack.extend(a.value for a in n.args)
            continue
        if isinstance(n, cst.Attribute):
            out.add(n.attr.value)
            stack.append(n.value)
            continue
        stack.extend(children(n))
    return out


def _result_names(site) -> set[str] | None:
    """Names bound to the call's result; empty when the result is used inline; None when it
    is discarded or stored somewhere we do not follow."""


    stmt = site.stmt
    if not isinstance(stmt, cst.SimpleStatementLine):
        return set()
    for small in stmt.body:
        if isinstance(small, cst.Assign) and contains(small.value, site.node):
            names: set[str] = set()
            for t in small.targets:
                _collect_names(t.target, names)
            return names or None
        if isinstance(small, cst.Expr) and small.value is site.node:
            return None  # result discarded
    return set()


def _collect_names(node, out: set[str]) -> None:

    if isinstance(node, cst.Name):
        out.add(node.value)
    elif isinstance(node, (cst.Tuple, cst.List)):
        for el in node.elements:
            _collect_names(el.value, out)
    elif isinstance(node, cst.StarredElement):
        _collect_names(node.value, out)
