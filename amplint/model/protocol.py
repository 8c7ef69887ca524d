"""Facts about the protocol's actors that several queries and rules share: which calls are
scaler calls or scaled backwards, which backwards are tensors' own, which optimizers hold
which modules' parameters (and so which scaler owns a clip), which scalers are disabled.
"""

from __future__ import annotations

import re

import libcst as cst

from .. import torch_api as T
from .names import dotted_text
from .scopes import owner_class
from .syntax import expr_key

# receivers of ``.backward(...)`` that are not tensors: wrappers that scale or route the loss
_WRAPPER_RECV = re.compile(r"accelerat|engine|trainer|strategy|fabric|scaler|optim|wrapper|runner|deepspeed|^amp$|^self$")


def is_scaler_call(model, node, methods=T.SCALER_PROTOCOL) -> bool:
    site = model.call_of.get(node)
    return (site is not None and site.recv is not None and site.method in methods
            and model.is_scaler(site.func, site.recv))


def is_scaled_backward(model, node) -> bool:
    """``S.scale(x).backward()`` (or a backward of ``S.scale(...)`` arithmetic)."""
    site = model.call_of.get(node)
    if site is None or site.method != "backward":
        return False
    recv = site.recv_node
    return recv is not None and _mentions_scale(model, site.func, recv)


def _mentions_scale(model, func, node) -> bool:
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "scale":
        inner = model.call_of.get(node)
        return inner is not None and model.is_scaler(func, inner.recv)
    if isinstance(node, cst.BinaryOperation):
        return _mentions_scale(model, func, node.left) or _mentions_scale(model, func, node.right)
    if isinstance(node, cst.Call) and len(node.args) == 2 and model.imports.qualify(node.func) in ("typing.cast",):
        return _mentions_scale(model, func, node.args[1].value)
    return False


def tensor_backward(model, site) -> bool:
    """A ``tensor.backward()`` / ``torch.autograd.backward(t)``, not a wrapper's ``backward(loss)``
    (``accelerator.backward(loss)``, ``model_engine.backward(loss)``, ``self.backward(loss)``)."""
    if site.method != "backward":
        return True
    recv = site.recv
    if recv is None:
        return site.recv_node is not None  # ``(a + b).backward()``, ``loss_fn(x).backward()``
    if _WRAPPER_RECV.search(recv.rsplit(".", 1)[-1].lower()):
        return False
    first = site.arg(0, "gradient")
    if first is not None and site.keyword("gradient") is None and "loss" in model.code_for(first.value).lower():
        return False  # ``something.backward(loss)``: a wrapper taking the loss
    return True


def sometimes_scaled(model, site) -> bool:
    """The receiver is bound to ``S.scale(...)`` somewhere in the function (``if use_amp: loss =
    scaler.scale(loss)``: the unscaled path is the non-AMP configuration), or to the result of
    a helper that may scale it (``loss = self.scale_loss(loss)``)."""
    recv = site.recv
    if recv is None:
        return False
    for b in model.scopes.local(site.func, recv):
        if b.value is None or b.kind not in ("assign", "ann", "walrus"):
            continue
        if _mentions_scale(model, site.func, b.value) or _scaling_call(model, b.value):
            return True
    return False


def _scaling_call(model, value) -> bool:
    if not isinstance(value, cst.Call):
        return False
    site = model.call_of.get(value)
    if site is None:
        return False
    if "scale" in (site.text or "").rsplit(".", 1)[-1].lower():
        return True
    callee = model.callee_of(site)
    return callee is not None and any(
        c.method == "scale" and c.recv is not None and model.is_scaler(callee, c.recv) for c in callee.calls
    )


def disabled_scalers(model) -> set[str]:
    """Names bound to a GradScaler built with a literal ``enabled=False``."""
    out = set()
    for a in model.assignments:
        ctor = model.scalers.ctor_in(a.value)
        if ctor is None or ctor is not a.value:
            continue
        for arg in ctor.args:
            if arg.keyword is not None and arg.keyword.value == "enabled":
                if isinstance(arg.value, cst.Name) and arg.value.value == "False":
                    out.update(t for t in a.targets if t is not None)
    return out


def guards_stage(model, func) -> bool:
    """The function (or a function it defines) reads GradScaler's private per-optimizer stage
    (``scaler._per_optimizer_states[id(opt)]["stage"] is not OptState.UNSCALED``): it checks
    before unscaling."""
    todo = [func]
    while todo:
        f = todo.pop()
        if any("_per_optimizer_states" in t or "OptState" in t for t in model.value_texts.get(f, ())):
            return True
        todo.extend(f.local_defs.values())
    return False


def optimizer_steps_through(model, site, key: str) -> bool:
    """The stepped optimizer was built around the scaler (``opt = Wrapper(opt, scaler)``), or a
    class of the file defines a ``step`` that steps through a scaler: the step is the scaler's."""
    last = key.rsplit("#", 1)[-1].split(".", 1)[-1].rsplit(".", 1)[-1] if "#" in key else key.rsplit(".", 1)[-1]
    recv = site.recv or ""
    for a in model.assignments:
        if recv not in a.targets or a.value is None or not hasattr(a.value, "args"):
            continue
        if any(last in model.code_for(arg.value) for arg in a.value.args):
            return True
    here = owner_class(site.func)
    for cls in model.classes:
        if cls is here:
            continue  # ``self.opt.step()`` inside the class is its attribute's step, not its own
        step = cls.methods.get("step")
        if step is None or model.has_backward(step):
            continue  # a trainer's ``step(batch)`` runs the whole iteration: not an optimizer's
        if any(c.method == "step" and model.is_scaler(step, c.recv) for c in step.calls):
            return True
    return False


# --- who owns a clip -----------------------------------------------------------------------------


def grad_owners(model, site) -> set[str]:
    """The scalers (as written) that step or unscale an optimizer holding the parameters a clip
    reads (``clip_grad_norm_(model_d.parameters(), ...)``), when that can be told; else empty."""
    modules = _modules_of(site.node)
    if not modules:
        return set()
    holders: set[str] = set()
    for b in model.bindings:
        if b.kind not in ("assign", "ann") or b.value is None:
            continue
        for v in model.values.binding(b):
            if v.kind == "optimizer" and v.data is not None:
                held = _modules_of(v.data) | _modules_through(model, b.func, v.data)
                if any(_related(m, h) for m in modules for h in held):
                    holders.add(b.name)
    if not holders:
        return set()
    owners: set[str] = set()
    for c in model.calls:
        if c.method in ("step", "unscale_") and c.recv is not None and model.is_scaler(c.func, c.recv):
            a = c.arg(0, "optimizer")
            k = expr_key(a.value) if a is not None else None
            if k is not None and any(k == h or k.rsplit(".", 1)[-1] == h.rsplit(".", 1)[-1] for h in holders):
                owners.add(c.recv)
    return owners


def _modules_of(node) -> set[str]:
    """Receivers of ``.parameters()`` / ``.named_parameters()`` calls inside ``node``."""
    from .syntax import children

    out = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value in ("parameters", "named_parameters"):
            text = dotted_text(n.func.value)
            if text is not None:
                out.add(text)
        stack.extend(children(n))
    return out


def _modules_through(model, func, node) -> set[str]:
    """``params = model.parameters()`` one binding back."""
    if isinstance(node, cst.Name):
        out = set()
        for b in model.scopes.lookup(func, node.value):
            if b.value is not None:
                out |= _modules_of(b.value)
        return out
    return set()


def _related(a: str, b: str) -> bool:
    return a == b or a.startswith(b + ".") or b.startswith(a + ".")
