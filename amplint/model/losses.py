"""Binary cross-entropy under CUDA autocast (read by AMP103): which calls are BCE (the
functional form, an inline `nn.BCELoss()(...)`, or a name bound only to an `nn.BCELoss`
instance), which autocast regions refuse it (enabled, and on CUDA or an unknown device), and
which functions such a region reaches."""

from __future__ import annotations

import libcst as cst

from . import autocast_facts as AF
from . import names as N
from .names import dotted_text
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

    start: dict = {}
    for site in model.calls:
        r = AF.innermost_autocast(site.regions)
        if r is not None and _bad_region(model, r) and not site.in_lambda:
            for callee in _callees(model, site):
                start.setdefault(callee, None)
    return set(_follow(model, start, lambda c: _callees(model, c)))


def _follow(model, start: dict, callees) -> dict:
    """``start`` (function -> what reached it) and the functions of this file they call, through
    :data:`_MAX_DEPTH` levels in all, each with what reached its caller; calls under a region
    that turns autocast off again are not followed."""
    out = dict(start)
    frontier = list(start)
    for _ in range(_MAX_DEPTH - 1):
        nxt = []
        for f in frontier:
            for site in f.calls:
                r = AF.innermost_autocast(site.regions)
                if r is not None and not _bad_region(model, r):
                    continue  # disabled again inside the helper
                for callee in callees(site):
                    if callee not in out:
                        out[callee] = out[f]
                        nxt.append(callee)
        frontier = nxt
    return out


def _callees(model, site) -> list:
    """The functions of this file a call runs: its callee, or the ``forward`` of a module object
    of a class of this file (``criterion(probs, y)`` with ``criterion = DiceBCELoss()``)."""
    callee = model.callee_of(site)
    if callee is not None:
        return [callee]
    return [fwd for owner, fwd in _forwards(model, site) if owner is model]


def _forwards(model, site) -> list:
    """``(model of its module, forward)`` for a call of an ``nn.Module`` object: a name or
    ``self`` attribute bound to a class's instance (``self.criterion = FocalLoss()``), or one built
    inline (``FocalLoss()(x, y)``); the class may live in another project module."""
    f = site.node.func
    classes = []
    if isinstance(f, cst.Call):
        text = dotted_text(f.func)
        classes = model.scopes.classes_named(text) if text else []
    elif site.text is not None and site.method not in _NOT_FORWARD:
        classes = [v.data for v in model.values.of(site.func, f) if v.kind == "instance" and v.data is not None]
        if not classes:
            for value in _bound_values(model, site):
                text = dotted_text(value.func) if isinstance(value, cst.Call) else None
                classes += model.scopes.classes_named(text) if text else []
    out = []
    for cls in classes:
        owner = getattr(cls, "owner_model", None) or model
        fwd = owner.scopes.method(cls, "forward")
        if fwd is not None and (owner, fwd) not in out:
            out.append((owner, fwd))
    return out


#: method calls that are not a module's ``__call__``
_NOT_FORWARD = frozenset({"forward", "backward", "step", "zero_grad", "to", "cuda", "half", "float", "train", "eval"})


def _bound_values(model, site) -> list:
    """What ``criterion`` / ``self.criterion`` is bound to (assignments of its scope or class)."""
    text = site.text
    if text.startswith("self.") and text.count(".") == 1:
        return [a.value for a in _class_assigns(model, site)]
    if "." in text:
        return []
    return [b.value for b in model.scopes.lookup(site.func, text) if b.kind == "assign" and b.value is not None]


def _class_assigns(model, site) -> list:
    """The assignments of ``self.<attr>`` (the call's receiver text) in the methods of its class."""
    cls = owner_class(site.func)
    return [] if cls is None else [a for a in model.assignments if site.text in a.targets and owner_class(a.func) is cls]


def loss_modules_under_autocast(model) -> list:
    """``(call site, BCE call)`` for calls under a refusing autocast region of this file that run
    the ``forward`` of a module class of another project module, which computes a BCE (directly
    or in a function of its module it calls) without disabling autocast first. (A plain loss
    function of another module is reported at its BCE: :func:`bce_calls_for_importers`.)"""
    out = []
    for site in model.calls:
        r = AF.innermost_autocast(site.regions)
        if r is None or site.in_lambda or not _bad_region(model, r) or model.callee_of(site) is not None:
            continue
        for owner, fwd in _forwards(model, site):
            if owner is model:
                continue
            hit = _bce_in(owner, fwd)
            if hit is not None:
                out.append((site, hit))
                break
    return out


def bce_calls_for_importers(model) -> list:
    """``(call site, kind, importer model, its call)`` for BCE calls of this module's functions that
    a project module calls under a refusing autocast region (``loss = d_loss(p_real, p_fake)``
    inside ``with torch.autocast("cuda")`` of the trainer importing ``losses.py``): the call that
    raises is here. Functions of this module those reach count too."""
    if model.project is None:
        return []
    bces = [(site, kind) for site in model.calls if not site.in_lambda
            for kind in [_bce_kind(model, site)] if kind is not None]
    if not bces:
        return []
    entry: dict = {}
    for func in {site.func for site, _k in bces} | _callers_of(model, {site.func for site, _k in bces}):
        if func.is_module or func.cls is not None:
            continue
        for im, c in model.external_calls(func):
            r = AF.innermost_autocast(c.regions)
            if r is not None and _bad_region(im, r) and func not in entry:
                entry[func] = (im, c)
    if not entry:
        return []
    reach = _follow(model, entry, lambda c: [f for f in [model.callee_of(c)] if f is not None])
    out = []
    for site, kind in bces:
        if site.func in reach and AF.innermost_autocast(site.regions) is None:
            im, c = reach[site.func]
            out.append((site, kind, im, c))
    return out


def _callers_of(model, funcs: set) -> set:
    """This module's functions that call (directly) one of ``funcs``."""
    return {f for f in model.functions for c in f.calls if model.callee_of(c) in funcs}


def _bce_in(owner, func, depth: int = 0):
    """The first BCE call ``func`` (of ``owner``'s module) makes outside a region that disables
    autocast, looking into the functions of that module it calls."""
    for s in func.calls:
        if s.in_lambda:
            continue
        r = AF.innermost_autocast(s.regions)
        if r is not None and not AF.autocast_on(owner, r):
            continue
        if _bce_kind(owner, s) is not None:
            return s
        if depth < _MAX_DEPTH - 1:
            # a helper of its module, or the forward of a loss module it holds (``self.bce_term =
            # DiceBCE()`` inside a combined loss)
            callee = owner.callee_of(s)
            inner = [(owner, callee)] if callee is not None else _forwards(owner, s)
            for o, f in inner:
                hit = _bce_in(o, f, depth + 1) if f is not func else None
                if hit is not None:
                    return hit
    return None


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
        assigns = _class_assigns(model, site)
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
