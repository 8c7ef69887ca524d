"""Named queries of AMP106 in files that have a GradScaler: a float16 loss back-propagated
unscaled on the paths where the scaler is not used.

``scaler = GradScaler() if args.fp16 else None`` with an autocast that is always on
(``with autocast():``) runs float16 in both configurations; the ``else: loss.backward()`` arm
is then float16 without loss scaling. An autocast switched by the same flag
(``autocast(enabled=args.fp16)``) is off on those paths, and the arm is float32 training.
"""

from __future__ import annotations

import re

from ..syntax import expr_key
from .observed import _obs
from .queries import conditional_amp


def fp16_backwards_on_unscaled_paths(model) -> list:
    """``(backward site, autocast region)``: plain backwards in the non-AMP arm of an AMP switch
    (or of a loss scaled only sometimes, ``if scaler: loss = scaler.scale(loss)``) whose loss comes
    from a float16 autocast region that is enabled on some path reaching them. The region's
    ``enabled=`` expression, when it has one, must be assumed true on such a path; a flag amplint
    cannot relate to the path keeps the finding back."""
    dt = model.dtypes
    if not any(dt.fp16_region(r) for r in model.regions):
        return []
    out = []
    seen: set[int] = set()
    for obs in _obs(model, "backward"):
        site = obs.site
        if site is None or id(site.node) in seen or site.in_lambda or site.method != "backward" \
                or site.recv_node is None or not model.tensor_backward(site):
            continue
        if any(r.kind == "no_grad" for r in site.regions):
            continue
        if not (conditional_amp(model, site.node) or model.sometimes_scaled(site)) or _rescaled(model, site):
            continue
        states = [st for st in obs.states if not st.speculative and not _dead(model, site.func, st)
                  and not any(_DEVICE.search(k) for k, _t in st.path.assume)]
        if not states:
            continue
        for r in _fp16_regions(model, site):
            if dt.disabled_here(site.arms, r):
                continue
            if r.enabled is not True:
                # a conditional context (``autocast(...) if amp else nullcontext()``) or an
                # ``enabled=`` switch: on only where the paths assume its flag true
                key = expr_key(dt.enabled_expr(r))
                if key is None or not any((key, True) in st.path.assume for st in states):
                    continue
            seen.add(id(site.node))
            out.append((site, r))
            break
    return out


#: a path selected by the device (``if device.type == "cuda"``, ``torch.cuda.is_available()``):
#: without CUDA, ``autocast("cuda")`` is off and the plain backward is float32 training
_DEVICE = re.compile(r"cuda|device|gpu|cpu|mps|xla|npu|hpu", re.IGNORECASE)


def _rescaled(model, site) -> bool:
    """The tensor is scaled by other means: named so (``scaled_loss``), or bound to a loss scaler of
    another library (``with amp.scale_loss(loss, opt) as sl``, ``loss_scaler(loss)``)."""
    if "scal" in (site.recv or "").lower():
        return True
    key = expr_key(site.recv_node)
    for b in model.values.bindings_of_key(site.func, key) if key is not None else ():
        if b.order >= site.order or b.value is None or "scal" not in model.code_for(b.value).lower():
            continue
        if not any(v.kind == "scaled" for v in model.values.of(site.func, b.value)):
            return True  # (``loss = scaler.scale(loss)`` is this GradScaler's: the other path decides)
    return False


def _dead(model, func, st) -> bool:
    """The path assumes a name false (``scaler is None``) that holds a GradScaler on every binding:
    the ``else`` of ``if scaler is not None`` after ``scaler = GradScaler()`` never runs."""
    for key, truth in st.path.assume:
        if truth is False:
            vals = model.values.of_key(func, key)
            if vals and all(v.kind == "scaler" for v in vals):
                return True
    return False


def _fp16_regions(model, site) -> list:
    """The float16 autocast regions the backward's tensor comes from: in its own function, or,
    for a parameter (``def backward_step(loss, optimizer, scaler=None)``), at this file's calls
    that pass it."""
    dt = model.dtypes
    r = dt.fp16_source(site.func, site.recv_node, site.order, arms=site.arms)
    if r is not None:
        return [r]
    key = expr_key(site.recv_node)
    if key is None or key not in site.func.params:
        return []
    if any(b.order < site.order and b.kind != "param" for b in model.values.bindings_of_key(site.func, key)):
        return []
    out = []
    for call, arg in model.callers_passing(site.func, key):
        hit = dt.fp16_source(call.func, arg, call.order, arms=call.arms)
        if hit is not None and not dt.disabled_here(call.arms, hit):
            out.append(hit)
    return out
