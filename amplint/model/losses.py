"""Binary cross-entropy under CUDA autocast (read by AMP103): which calls are BCE (the
functional form, an inline `nn.BCELoss()(...)`, or a name bound only to an `nn.BCELoss`
instance), which autocast regions refuse it (enabled, and on CUDA or an unknown device), and
which functions such a region reaches."""

from __future__ import annotations

import libcst as cst

from . import autocast_facts as AF
from . import names as N
from .scopes import owner_class


def bce_calls_under_autocast(model) -> list:
    """``(call site, kind)`` for BCE calls inside a refusing autocast region, or in a function such a
    region calls (``kind``: ``functional`` | ``inline`` | ``instance``)."""
    if not any(r.kind == "autocast" and _bad_region(model, r) for r in model.regions):
        return []
    reached = _reached_functions(model)
    out = []
    for site in model.calls:
        if site.in_lambda:
            continue
        kind = _bce_kind(model, site)
        if kind is None:
            continue
        r = AF.innermost_autocast(site.regions)
        if r is not None:
            if not _bad_region(model, r):
                continue
        elif site.func not in reached:
            continue
        out.append((site, kind))
    return out

_MAX_DEPTH = 3


def _bad_region(model, r) -> bool:

    return AF.autocast_on(model, r) and AF.device_is_cuda_or_unknown(model, r)


def _reached_functions(model) -> set:
    """Functions of this file called (transitively) from a call that runs under CUDA autocast."""

    out: set = set()
    frontier = []
    for site in model.calls:
        r = AF.innermost_autocast(site.regions)
        if r is not None and _bad_region(model, r) and not site.in_lambda:
            callee = model.callee_of(site)
            if callee is not None and callee not in out:
                out.add(callee)
                frontier.append(callee)
    for _ in range(_MAX_DEPTH - 1):
        nxt = []
        for f in frontier:
            for site in f.calls:
                r = AF.innermost_autocast(site.regions)
                if r is not None and not _bad_region(model, r):
                    continue  # disabled again inside the helper
                callee = model.callee_of(site)
                if callee is not None and callee not in out:
                    out.add(callee)
                    nxt.append(callee)
        frontier = nxt
    return out


def _bce_kind(model, site) -> str | None:


    if site.qual in N.BCE:
        return "functional"
    func = site.node.func
    if isinstance(func, cst.Call):
        q = model.imports.qualify(func.func) if isinstance(func.func, (cst.Name, cst.Attribute)) else None
        return "inline" if q in N.BCE_LOSS else None
    if site.text is not None and site.qual is None and _bound_to_bce_loss(model, site):
        return "instance"
    return None


def _bound_to_bce_loss(model, site) -> bool:

    from ..model import names as N

    text = site.text
    if text.startswith("self.") and text.count(".") == 1:
        cls = owner_class(site.func)
        if cls is None:
            return False
        assigns = [a for a in model.assignments if text in a.targets and owner_class(a.func) is cls]
    elif "." not in text and text in site.func.params and text not in site.func.assigned:
        # ``criterion`` handed in by the file's callers (``finetune(model, loader, criterion)``):
        # a BCE loss when every call passes one
        args = list(model.callers_passing(site.func, text))
        return bool(args) and all(any(v.kind == "bce" for v in model.values.of(c.func, arg)) for c, arg in args)
    elif "." not in text:
        if AF.shadowed(site.func, text):
            return False
        scope = site.func if site.func.is_local(text) else model.top
        assigns = [a for a in model.assignments if text in a.targets and a.func is scope]
    else:
        return False
    if not assigns:
        return False
    for a in assigns:
        v = a.value
        if not isinstance(v, cst.Call) or model.imports.qualify(v.func) not in N.BCE_LOSS:
            return False
    return True


def callee_text(model, site, kind: str) -> str:
    if kind == "inline":
        return model.code_for(site.node.func.func) + "()"
    return model.code_for(site.node.func)


def sigmoid_arg(model, node):
    """``z`` for ``torch.sigmoid(z)`` / ``F.sigmoid(z)`` / ``z.sigmoid()``, else None."""

    if not isinstance(node, cst.Call) or any(a.star for a in node.args):
        return None
    f = node.func
    q = model.imports.qualify(f) if isinstance(f, (cst.Name, cst.Attribute)) else None
    if q in ("torch.sigmoid", "torch.nn.functional.sigmoid", "torch.special.expit"):
        if len(node.args) == 1 and node.args[0].keyword is None:
            return node.args[0].value
        return None
    if isinstance(f, cst.Attribute) and f.attr.value == "sigmoid" and not node.args and q is None:
        return f.value
    return None
