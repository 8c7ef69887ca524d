"""Helpers shared by the scaler-sequencing rules (AMP003-AMP009, AMP012, AMP903).

No LibCST import at module level: the CLI imports every rule before deciding to parse.
"""

from __future__ import annotations

import re

SCALER_METHODS = ("scale", "unscale_", "step", "update")

# receivers of ``.backward(...)`` that are not tensors: wrappers that scale or route the loss
_WRAPPER_RECV = re.compile(
    r"accelerat|engine|trainer|strategy|fabric|scaler|optim|wrapper|runner|deepspeed|^amp$|^self$"
)


def display_key(key: str | None) -> str:
    """A canonical flow key as the user wrote it: ``train_step#1.scaler`` -> ``scaler``."""
    if not key:
        return "scaler"
    if "#" in key:
        key = key.rsplit("#", 1)[-1].split(".", 1)[-1]
    return key


def scaler_text(model, func, key: str | None) -> str | None:
    """How the scaler with flow key ``key`` is spelled in ``func``: the receiver of its scaler
    calls there, when that is unambiguous."""
    texts = []
    for c in func.calls:
        if c.recv is not None and c.method in SCALER_METHODS and model.is_scaler(func, c.recv) and c.recv not in texts:
            texts.append(c.recv)
    want = display_key(key)
    if want in texts:
        return want
    if len(texts) == 1:
        return texts[0]
    if not texts and key and "#" not in key and model.is_scaler(func, key):
        return key  # ``self.scaler`` in a helper method that does not mention it otherwise
    return None


def is_scaler_call(model, node, methods=SCALER_METHODS) -> bool:
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
    import libcst as cst

    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "scale":
        inner = model.call_of.get(node)
        return inner is not None and model.is_scaler(func, inner.recv)
    if isinstance(node, cst.BinaryOperation):
        return _mentions_scale(model, func, node.left) or _mentions_scale(model, func, node.right)
    if isinstance(node, cst.Call) and len(node.args) == 2 and model.imports.qualify(node.func) in ("typing.cast",):
        return _mentions_scale(model, func, node.args[1].value)
    return False


def conditional_amp(model, node) -> bool:
    """``node`` sits in one arm of an if/else on an AMP switch (``use_amp``, ``scaler is not
    None``, ``self.fp16``...) whose other arm uses the scaler (scales a loss, steps or updates
    through it): the arms are the AMP and the non-AMP variant of one step."""
    for alt in model.flow.alternatives(node, amp_conditions=True):
        if is_scaler_call(model, alt) or is_scaled_backward(model, alt):
            return True
    return False


def tensor_backward(model, site) -> bool:
    """A ``tensor.backward()`` / ``torch.autograd.backward(t)``, not a wrapper's ``backward(loss)``
    (``accelerator.backward(loss)``, ``model_engine.backward(loss)``, ``self.backward(loss)``)."""
    if site.method != "backward":
        return True  # torch.autograd.backward(...)
    recv = site.recv
    if recv is None:
        return site.recv_node is not None  # ``(a + b).backward()``, ``loss_fn(x).backward()``
    last = recv.rsplit(".", 1)[-1].lower()
    if _WRAPPER_RECV.search(last):
        return False
    first = site.arg(0, "gradient")
    if first is not None and site.keyword("gradient") is None and "loss" in model.code_for(first.value).lower():
        return False  # ``something.backward(loss)``: a wrapper taking the loss
    return True


def simple_receiver(node) -> bool:
    import libcst as cst

    return isinstance(node, (cst.Name, cst.Attribute, cst.Subscript, cst.Call)) and not getattr(node, "lpar", None)


def enclosing_block(model, func, stmt):
    """(statement list, index) of the block of ``func`` that holds ``stmt`` directly."""
    import libcst as cst

    from ..model.syntax import child_fields

    stack = [func.node]
    while stack:
        n = stack.pop()
        body = getattr(n, "body", None)
        if isinstance(body, (list, tuple)):
            for i, s in enumerate(body):
                if s is stmt:
                    return list(body), i
        for name in child_fields(type(n)):
            v = getattr(n, name)
            if isinstance(v, cst.CSTNode):
                if not isinstance(v, (cst.FunctionDef, cst.ClassDef, cst.Lambda)) or v is func.node:
                    stack.append(v)
            elif isinstance(v, (list, tuple)):
                stack.extend(x for x in v if isinstance(x, cst.CSTNode)
                             and not isinstance(x, (cst.FunctionDef, cst.ClassDef)))
    return None, -1


def in_eval_code(obs) -> bool:
    """The observation is evaluation code (AMP201 reports scaler calls there)."""
    from .amp201_scaler_in_eval import _where

    return _where(obs) is not None


def plain_backwards_into_steps(model, partial: bool):
    """Plain ``x.backward()`` calls whose gradients a ``S.step(O)`` consumes: yields
    (backward CallSite, scaler key, step observation).

    ``partial=False``: no scaled backward of S ran since its last step (AMP004); ``partial=True``:
    a scaled backward did too (AMP009).  Conditional AMP arms, wrappers' ``backward(loss)`` and
    backwards that may feed an optimizer stepped without the scaler are left out."""
    scaler_opts = {o.opt for o in model.observations("step")}
    disabled = _disabled_scalers(model)
    plain_steps: dict = {}
    for o in model.observations("opt_step"):
        plain_steps.setdefault(o.func, set()).add(o.opt)
    seen: set[int] = set()
    for obs in model.observations("step"):
        if display_key(obs.scaler) in disabled:
            continue  # ``GradScaler(enabled=False)`` steps the optimizer as it is
        for st in obs.states:
            if not st.plain or st.speculative:
                continue
            scaled = bool(st.scaled_backwards(obs.scaler))
            if scaled != partial:
                continue
            if not partial and not st.knows_backwards(obs.scaler):
                continue
            for node in st.plain:
                if id(node) in seen:
                    continue
                site = model.call_of.get(node)
                if site is None or not tensor_backward(model, site) or conditional_amp(model, node):
                    continue
                if _sometimes_scaled(model, site):
                    continue
                if any(r.kind == "no_grad" for r in site.regions):
                    continue
                others = plain_steps.get(site.func, set()) | plain_steps.get(obs.func, set())
                if others - scaler_opts:
                    continue  # an optimizer stepped without the scaler may own these gradients
                seen.add(id(node))
                yield site, obs.scaler, obs


def wrap_in_scale_fix(model, site, scaler: str | None, title: str):
    """``loss.backward(...)`` -> ``S.scale(loss).backward(...)``."""
    from .base import FixPlan, NodeEdit

    recv = site.recv_node
    if scaler is None or site.method != "backward" or recv is None or not simple_receiver(recv):
        return None
    return FixPlan("safe", title, [NodeEdit("replace", recv, f"{scaler}.scale({model.code_for(recv)})")])


def _sometimes_scaled(model, site) -> bool:
    """The receiver is bound to ``S.scale(...)`` somewhere in the function
    (``if use_amp: loss = scaler.scale(loss)``: the unscaled path is the non-AMP configuration),
    or to the result of a helper that may scale it (``loss = self.scale_loss(loss)``)."""
    recv = site.recv
    if recv is None:
        return False
    for a in model.assignments:
        if a.func is not site.func or recv not in a.targets or a.value is None:
            continue
        if _mentions_scale(model, site.func, a.value) or _scaling_call(model, a.value):
            return True
    return False


def _scaling_call(model, value) -> bool:
    """A call whose result may be a scaled loss: a helper of this file that calls ``S.scale``,
    or any callee named like one (``amp.scale_loss(loss)``)."""
    import libcst as cst

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


def _disabled_scalers(model) -> set[str]:
    """Names bound to a GradScaler built with a literal ``enabled=False``."""
    import libcst as cst

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
