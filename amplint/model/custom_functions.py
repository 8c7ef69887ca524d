"""Custom autograd Functions (read by AMP104): subclasses of `torch.autograd.Function` (also
through the file's own base classes), their `forward`/`backward` (inherited ones included) and
the `custom_fwd`/`custom_bwd` decorators on them."""

from __future__ import annotations

import libcst as cst

from . import autocast_facts as AF
from . import names as N


def mismatched_custom_functions(model) -> list:
    """``(class, method lacking its decorator, partner method, missing, present, decorator text to
    add or None)``: exactly one of ``forward`` / ``backward`` carries ``custom_fwd`` / ``custom_bwd``."""
    out = []
    seen: set[int] = set()
    for cls in _functions(model):
        fwd = _method(model, cls, "forward")
        bwd = _method(model, cls, "backward")
        if fwd is None or bwd is None:
            continue
        f_dec = _decorator(model, fwd, "custom_fwd")
        b_dec = _decorator(model, bwd, "custom_bwd")
        if (f_dec is None) == (b_dec is None):
            continue
        if f_dec is not None:
            target, partner, missing, present, dec = bwd, fwd, "custom_bwd", "custom_fwd", f_dec
        else:
            target, partner, missing, present, dec = fwd, bwd, "custom_fwd", "custom_bwd", b_dec
        if (target.cls is not cls and partner.cls is not cls) or id(target.node) in seen:
            continue  # both inherited: reported on the base class
        seen.add(id(target.node))
        out.append((cls, target, partner, missing, present, _missing_text(model, dec, missing)))
    return out

def _functions(model) -> list:
    """Classes deriving from torch.autograd.Function, directly or through classes of this file."""

    by_name = {c.name: c for c in model.classes}
    found: list = []
    changed = True
    seen: set[int] = set()
    while changed:
        changed = False
        for c in model.classes:
            if id(c) in seen:
                continue
            if any(q in N.AUTOGRAD_FUNCTION for q in c.base_quals) or any(
                b in by_name and id(by_name[b]) in seen for b in c.bases
            ):
                seen.add(id(c))
                found.append(c)
                changed = True
    return found


def _method(model, cls, name: str):
    by_name = {c.name: c for c in model.classes}
    c = cls
    visited: set[int] = set()
    while c is not None and id(c) not in visited:
        visited.add(id(c))
        m = c.methods.get(name)
        if m is not None:
            return m
        c = next((by_name[b] for b in c.bases if b in by_name), None)
    return None


def _decorator(model, func, kind: str):
    """The ``custom_fwd`` / ``custom_bwd`` decorator of ``func`` (any spelling), or None."""


    wanted = N.CUSTOM_FWD if kind == "custom_fwd" else N.CUSTOM_BWD
    for d in func.node.decorators:
        e = d.decorator
        callee = e.func if isinstance(e, cst.Call) else e
        if not isinstance(callee, (cst.Name, cst.Attribute)):
            continue
        q = model.imports.qualify(callee)
        text = N.dotted_text(callee) or ""
        if q in wanted or text.rsplit(".", 1)[-1] == kind or (q or "").rsplit(".", 1)[-1] == kind:
            return d
    return None


def _missing_text(model, dec, missing: str) -> str | None:
    """The partner decorator: spelled like ``dec`` when ``dec`` is the ``torch.amp`` API,
    else ``torch.amp.<missing>(device_type=...)`` (never a deprecated spelling)."""

    from ..model import names as N

    e = dec.decorator
    callee = e.func if isinstance(e, cst.Call) else e
    text = N.dotted_text(callee)
    q = model.imports.qualify(callee)
    if text is None or q is None:
        return None
    present = "custom_fwd" if missing == "custom_bwd" else "custom_bwd"
    if not text.endswith(present) or not q.endswith(present):
        return None
    head = text.split(".", 1)[0]
    if q.startswith(("torch.cuda.amp", "torch.cpu.amp")):
        if not q.startswith("torch.cuda.amp"):
            return None
        dev = '"cuda"'
    else:
        if q not in N.CUSTOM_FWD | N.CUSTOM_BWD or not isinstance(e, cst.Call):
            return None
        dev = next((model.code_for(a.value) for a in e.args if a.keyword is not None and a.keyword.value == "device_type"), None)
        if dev is None:
            return None
        if "." in text and model.imports.names.get(head) == "torch":
            return f"{text[: -len(present)]}{missing}(device_type={dev})"
        if "." not in text and model.imports.names.get(missing) == q[: -len(present)] + missing:
            return f"{missing}(device_type={dev})"
    # the torch.amp spelling through the module
    if "." in text and model.imports.names.get(head) == "torch":
        return f"{head}.amp.{missing}(device_type={dev})"
    if AF.tree(model).torch_bound_before(dec):
        return f"torch.amp.{missing}(device_type={dev})"
    return None
