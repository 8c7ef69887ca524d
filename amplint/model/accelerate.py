"""``accelerate``'s gradient accumulation and the unscale it hides (read by AMP005).

Under ``Accelerator(mixed_precision="fp16")`` the accelerator owns a GradScaler. Its
``clip_grad_norm_`` / ``clip_grad_value_`` / ``unscale_gradients`` call ``scaler.unscale_(opt)``
every time they run, while the prepared optimizer's ``step`` (and with it ``scaler.update()``)
only runs on the micro-step where ``accelerator.sync_gradients`` is true. Called on every
micro-step of ``with accelerator.accumulate(model):``, the second micro-step unscales again
before any update: ``RuntimeError: unscale_() has already been called on this optimizer since
the last update()``. The documented pattern guards the clip with ``if accelerator.sync_gradients:``.

A call counts when it sits in the body of a ``with R.accumulate(...)`` of its function, on the
same receiver ``R``, and no condition between the two can stand for the accumulation boundary.
An accelerator whose constructor this file shows with a literal precision other than fp16, or
with no accumulation at all (neither ``gradient_accumulation_steps`` above 1 nor a plugin), has
no scaler that can be unscaled twice.
"""

from __future__ import annotations

import libcst as cst

from .. import torch_api as T
from .scalers import owner_class
from .syntax import children, contains

#: words of a condition that may stand for the accumulation boundary (``sync_gradients``,
#: ``(step + 1) % accum == 0``, ``is_last_micro_step``, ``should_step``)
_BOUNDARY_WORDS = ("sync", "step", "accum", "iter", "boundary", "update", "last", "batch_idx", "micro")


def unscales_each_micro_step(model) -> list:
    """``(call site, accumulate site)`` for each accelerator unscale that runs on every
    micro-step of an ``accumulate`` block."""
    hit = getattr(model, "_accelerate_unscales", None)
    if hit is None:
        hit = model._accelerate_unscales = _compute(model)
    return hit


def _compute(model) -> list:
    blocks = [s for s in model.calls if s.method == T.ACCELERATOR_ACCUMULATE and s.recv is not None
              and isinstance(s.stmt, cst.With) and any(i.item is s.node for i in s.stmt.items)]
    if not blocks:
        return []
    out = []
    for site in model.calls:
        if site.method not in T.ACCELERATOR_UNSCALES or site.recv is None or site.in_lambda:
            continue
        for block in blocks:
            if block.func is not site.func or block.recv != site.recv:
                continue
            if not contains(block.stmt.body, site.node):
                continue
            if not _may_unscale_twice(model, site):
                break
            if _guarded(model, block.stmt, site):
                break
            out.append((site, block))
            break
    return out


def _guarded(model, with_stmt, site) -> bool:
    """A condition inside the block (an ``if`` around the call, or an early ``continue`` /
    ``return`` before it) that may be the accumulation boundary."""
    for owner, test, _index in site.arms:
        if contains(with_stmt.body, owner) and _boundary_test(model, test):
            return True
    for stmt in _statements_before(with_stmt.body, site.node):
        if isinstance(stmt, cst.If) and _boundary_test(model, stmt.test):
            return True
    return False


def _statements_before(block, target) -> list:
    """The ``if`` statements of ``block`` (and of the blocks that lead to ``target``) that come
    before the statement holding ``target``."""
    out = []
    body = getattr(block, "body", ())
    for stmt in body:
        if contains(stmt, target):
            for child in children(stmt):
                if isinstance(child, (cst.IndentedBlock, cst.SimpleStatementSuite)) and contains(child, target):
                    out.extend(_statements_before(child, target))
            break
        if isinstance(stmt, cst.If):
            out.append(stmt)
    return out


def _boundary_test(model, test) -> bool:
    text = model.code_for(test).lower()
    if T.ACCELERATOR_SYNC in text or "%" in text:
        return True
    return any(w in text for w in _BOUNDARY_WORDS) or _has_call(test)


def _has_call(node) -> bool:
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, cst.Call):
            return True
        stack.extend(children(n))
    return False


def _may_unscale_twice(model, site) -> bool:
    """The receiver may be an fp16 accelerator that accumulates: False only when every
    constructor bound to it in this file says otherwise."""
    recv = site.recv
    binds = [a for a in model.assignments if recv in a.targets]
    if recv.startswith("self."):
        cls = owner_class(site.func)
        binds = [a for a in binds if cls is not None and owner_class(a.func) is cls]
    elif "." not in recv:
        local = [a for a in binds if a.func is site.func]
        binds = local if local or site.func.is_local(recv) else [a for a in binds if a.func.is_module]
    ctors = []
    for a in binds:
        if not isinstance(a.value, cst.Call):
            return True  # bound to something else too: may be an accelerator from anywhere
        call = model.call_of.get(a.value)
        if call is not None and call.qual in T.ACCELERATOR:
            ctors.append(a.value)
    if not ctors:
        return "accelerat" in recv.lower()
    return any(_ctor_may(c) for c in ctors)


def _ctor_may(call: cst.Call) -> bool:
    if any(a.star for a in call.args):
        return True
    kw = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
    mp = kw.get("mixed_precision")
    if isinstance(mp, cst.SimpleString) and str(mp.evaluated_value) in T.ACCELERATOR_NO_SCALER_PRECISIONS:
        return False
    steps = kw.get("gradient_accumulation_steps")
    if steps is None:
        return "gradient_accumulation_plugin" in kw
    if isinstance(steps, cst.Integer):
        return int(steps.value) > 1
    return True
