"""Events: every call site classified once into a small alphabet.

``scaler``      a method of a GradScaler (``method``: scale, unscale_, step, update, a query, or
                another method, which may change anything about the scaler);
``create``      a GradScaler constructor;
``backward``    ``tensor.backward(...)`` / ``torch.autograd.backward(tensor)`` (``tensor``);
``clip``        a clip function, a magnitude read of ``.grad`` (norms, sums, maxima), an edit of
                ``.grad`` that is not a rescaling, FSDP's own ``clip_grad_norm_`` (``use``:
                ``clip`` | ``edit`` | ``read``);
``zero_grad``   ``x.zero_grad()``;
``opt_step``    ``optimizer.step()`` on a receiver that holds an optimizer;
``torch``       any other call into torch or a pure module (no effect on the protocol);
``pure``        a builtin that cannot reach a scaler;
``call``        anything else: a function or method of the project (interpreted at the call
                site), or unknown code (which may do anything to the scalers it can reach).

Whether a receiver is a scaler depends on the calling context for parameters (a helper's
``s.step(opt)`` steps a scaler when its caller hands it one): such sites are classified
statically and carry ``param_recv`` so the interpreter can re-read them in context.
"""

from __future__ import annotations

import libcst as cst

from .. import torch_api as T
from .structure import CallSite

PURE_BUILTINS = frozenset({
    "print", "len", "isinstance", "issubclass", "getattr", "hasattr", "id", "type", "str", "repr", "float", "int",
    "bool", "range", "enumerate", "zip", "min", "max", "sum", "abs", "round", "list", "tuple", "dict", "set",
    "sorted", "reversed", "format", "any", "all", "iter", "next", "map", "filter", "hash", "callable", "vars",
})
PURE_MODULES = frozenset({"math", "logging", "numpy", "np", "time", "os", "json", "warnings", "random", "itertools"})
CASTS = frozenset({"typing.cast", "typing_extensions.cast"})


class Event:
    __slots__ = ("kind", "site", "method", "tensor", "opt", "use", "param_recv", "via")

    def __init__(self, kind: str, site: CallSite, method: str | None = None, tensor=None, opt=None, use=None,
                 param_recv: bool = False, via=None) -> None:
        self.kind = kind
        self.site = site
        self.method = method
        self.tensor = tensor
        self.opt = opt
        self.use = use
        self.param_recv = param_recv
        #: (``clip`` through a local alias of gradients) the binding ``g = p.grad`` whose read it uses
        self.via = via

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"Event({self.kind}, {self.site.text})"


class Events:
    """The events of a file's call sites (``events.of(site)``), computed on first use."""

    def __init__(self, model) -> None:
        self.m = model
        self._memo: dict[int, Event] = {}
        self._rescale_memo: dict = {}
        self._fsdp: frozenset[str] | None = None
        self.opt_texts = self._optimizer_texts()
        #: containers an item of which a scaler steps or unscales (``scaler.step(opts["D"])``)
        self.opt_containers = frozenset(t.rsplit("[", 1)[0] for t in self.opt_texts if t.endswith("]"))

    def of(self, site: CallSite) -> Event:
        hit = self._memo.get(id(site))
        if hit is None:
            hit = self._memo[id(site)] = self._classify(site)
        return hit

    def _grad_alias(self, cs: CallSite):
        """The receiver chain starts at a local name every binding of which is a ``.grad`` chain
        (``g = p.grad`` ... ``g.data.norm(2)``, ``g.data.mul_(coef)``): see :meth:`_grad_name`."""
        if cs.recv_node is None or isinstance(cs.recv_node, cst.Name) and cs.method is None:
            return None
        return self._grad_name(cs, cs.recv_node)

    def _grad_name(self, cs: CallSite, node):
        """``node`` (read by ``cs``) is (a chain on) a local name every binding of which is a
        ``.grad`` chain (``grad_xy = viewspace.grad[vis, :2]`` ... ``torch.norm(grad_xy)``): the
        binding whose ``.grad`` read the call uses (the last one before it), or None."""
        root = None
        for n in receiver_chain(node):
            root = n
        if not isinstance(root, cst.Name):
            return None
        binds = [b for b in self.m.scopes.lookup(cs.func, root.value) if b.kind != "param"]
        if not binds or not all(b.kind == "assign" and not b.unpack and b.value is not None
                                and mentions_grad(b.value) and not predicate_chain(b.value)
                                and not _autograd_call(b.value) for b in binds):
            return None
        before = [b for b in binds if b.order < cs.order]
        return max(before, key=lambda b: b.order) if before else binds[0]

    def _project_backward(self, cs: CallSite) -> bool:
        """``self.amp.backward(loss)``: the receiver is an object of a project class with a
        ``backward`` method (an AMP helper that scales inside), not a tensor."""
        if cs.recv_node is None or not steps_through_receiver(cs):
            return False
        return any(v.kind == "instance" and v.data is not None and self.m.scopes.method(v.data, "backward") is not None
                   for v in self.m.values.of(cs.func, cs.recv_node))

    def _classify(self, cs: CallSite) -> Event:
        m = cs.method
        recv = cs.recv
        param_recv = recv is not None and recv.split(".", 1)[0].split("[", 1)[0] in cs.func.params
        if recv is not None and m is not None and self.m.is_scaler(cs.func, recv):
            return Event("scaler", cs, method=m)
        if self.m.scalers.is_ctor_call(cs.node):
            return Event("create", cs)
        if m == "backward":
            if recv in ("self", "cls") or self._project_backward(cs):
                return Event("call", cs, method=m, param_recv=param_recv)
            tensor = cs.recv_node
            if recv is not None and cs.node.args and cs.node.args[0].keyword is None and _back_propagator(recv):
                # ``accelerator.backward(loss)``, ``fabric.backward(loss)``: the tensor is the argument
                tensor = cs.node.args[0].value
            return Event("backward", cs, method=m, tensor=tensor, param_recv=param_recv)
        qual = cs.qual
        if qual is not None:
            if qual in T.AUTOGRAD_BACKWARD:
                first = cs.arg(0, "tensors")
                return Event("backward", cs, tensor=first.value if first is not None else None)
            if qual in T.CLIP_FUNCTIONS:
                return Event("clip", cs, use="read" if qual.endswith("get_total_norm") else "clip")
            if qual in T.NORM_FUNCTIONS or qual in T.GRAD_EDIT_FUNCTIONS or qual in T.GRAD_READ_FUNCTIONS:
                first = cs.arg(0, "input")
                via = None if first is None or reads_grads(first.value) else self._grad_name(cs, first.value)
                if first is not None and (via is not None or reads_grads(first.value)) and not predicate_chain(first.value):
                    edit = qual in T.GRAD_EDIT_FUNCTIONS
                    if not edit and (self._normalizes(cs) or self._rescales(cs.func)):
                        return Event("torch", cs)
                    return Event("clip", cs, use="edit" if edit else "read", via=via)
                return Event("torch", cs)
            if qual.startswith("torch.") or qual.split(".", 1)[0] in PURE_MODULES:
                return Event("torch", cs)
        if m in T.GRAD_READ_METHODS and not predicate_chain(cs.recv_node):
            via = None if reads_grads(cs.recv_node) else self._grad_alias(cs)
            if via is not None or reads_grads(cs.recv_node):
                # ``p.grad.norm()``, ``p.grad.pow(2).sum()``: a magnitude read of scaled gradients
                if self._normalizes(cs) or self._rescales(cs.func):
                    return Event("torch", cs)
                return Event("clip", cs, use="read", via=via)
        if m in T.GRAD_EDIT_METHODS:
            via = None if mentions_grad(cs.recv_node) else self._grad_alias(cs)
            if via is not None or mentions_grad(cs.recv_node):
                # ``p.grad.clamp_(-1, 1)``: an edit that is not a rescaling
                return Event("clip", cs, use="edit", via=via)
        if m == "clip_grad_norm_" and recv is not None and recv in self.fsdp_models:
            return Event("clip", cs, use="clip")  # FSDP's own ``model.clip_grad_norm_()``
        if recv == "self" and m is not None and qual is None and self._partial_attr(cs) in T.CLIP_FUNCTIONS:
            # ``self.clip_fn(params)`` with ``self.clip_fn = functools.partial(clip_grad_norm_,
            # max_norm=...)`` bound by the class or a base class (of any module)
            return Event("clip", cs, use="clip")
        if recv == "self" and m in _CLIP_NAMES and qual is None and self._configured_clip(cs):
            return Event("clip", cs, use="clip")
        if m == "zero_grad":
            if T.submodule_receiver(recv):
                # ``model.backbone.zero_grad()``: a part of the model (frozen in a warm-up); the
                # optimizer's other gradients stay, inf checks and all
                return Event("torch", cs)
            return Event("zero_grad", cs, param_recv=param_recv)
        if m == "step" and recv is not None and self.is_optimizer(cs):
            return Event("opt_step", cs, param_recv=param_recv)
        if cs.text is not None and "." not in cs.text and cs.text in PURE_BUILTINS and not cs.func.is_local(cs.text):
            return Event("pure", cs)
        return Event("call", cs, method=m, param_recv=param_recv)

    def _partial_attr(self, cs: CallSite) -> str | None:
        """The function every binding of ``self.<method>`` makes a ``functools.partial`` of, if one."""
        from .scopes import owner_class

        cls = owner_class(cs.func)
        if cls is None or cs.method is None:
            return None
        found = None
        for b in self.m.scopes.attr(cls, cs.method):
            v = b.value
            model = getattr(b.func, "owner_model", None) or self.m
            if not (isinstance(v, cst.Call) and v.args and model.imports.qualify(v.func) == "functools.partial"):
                return None
            inner = model.imports.qualify(v.args[0].value)
            if inner is None or (found is not None and inner != found):
                return None
            found = inner
        return found

    def _configured_clip(self, cs: CallSite) -> bool:
        """``self.clip_grad_norm(params)`` where ``self.clip_grad_norm`` is no method but an object
        a factory builds from the configuration (``instantiate_from_config(cfg.clip_grad_norm)``):
        named after torch's clip and handed the parameters, it clips them."""
        from .scopes import owner_class

        cls = owner_class(cs.func)
        if cls is None or self.m.scopes.method(cls, cs.method) is not None or not cs.node.args:
            return False
        binds = self.m.scopes.attr(cls, cs.method)
        return bool(binds) and all(type(b.value) is cst.Call or type(b.value) is cst.Name and b.value.value == "None"
                                   for b in binds) and any(type(b.value) is cst.Call for b in binds)

    def _rescales(self, func) -> bool:
        """``func`` puts the loss scale into arithmetic (``inv = 1.0 / scaler.get_scale()``, ``norm
        / scale`` with ``scale = scaler.get_scale()``): the gradient magnitudes it reads are
        brought back to true units there."""
        hit = self._rescale_memo.get(func)
        if hit is not None:
            return hit
        from .usage import name_uses

        sites = {id(c.node) for c in func.calls if c.method in ("get_scale", "_get_scale_async")}
        hit = False
        if sites:
            names = {name for name, binds in self.m.scopes.locals_of(func).items() if "." not in name
                     and any(b.kind == "assign" and not b.unpack and id(b.value) in sites for b in binds)}
            for u in name_uses(func, names, sites):
                if u.store:
                    continue
                parent, _field = u.parent()
                if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, (cst.Divide, cst.Multiply)):
                    hit = True
                    break
        self._rescale_memo[func] = hit
        return hit

    def _normalizes(self, cs: CallSite) -> bool:
        """``norm = torch.norm(p.grad)`` used only to divide gradients (``eps * p.grad / norm``,
        FGM's perturbation) or compared (``if norm != 0``): the ratio does not depend on the
        loss scale, so the read is not a magnitude that scaled gradients falsify."""
        from .usage import name_uses

        names = {b.name for b in self.m.bindings if b.value is cs.node and b.kind == "assign" and "." not in b.name}
        if len(names) != 1:
            return False
        uses = [u for u in name_uses(cs.func, names) if not u.store]
        for u in uses:
            parent, field = u.parent()
            if isinstance(parent, cst.BinaryOperation) and field == "right" and isinstance(parent.operator, cst.Divide) \
                    and _has_grads(parent.left):
                continue
            if isinstance(parent, (cst.ComparisonTarget, cst.Comparison)):
                continue
            call, _ = u.parent(2)
            if isinstance(parent, cst.Arg) and isinstance(call, cst.Call) and isinstance(call.func, (cst.Name, cst.Attribute)) \
                    and (call.func.attr if isinstance(call.func, cst.Attribute) else call.func).value in T.GRAD_PREDICATES:
                continue  # ``torch.isnan(norm)``, ``math.isfinite(norm)``
            return False
        return bool(uses)

    # --- receivers ---------------------------------------------------------------------------

    def is_optimizer(self, cs: CallSite) -> bool:
        recv = cs.recv or ""
        if recv in self.opt_texts:
            return True
        if recv.endswith("]") and recv.rsplit("[", 1)[0] in self.opt_containers \
                and not any(w in recv.lower() for w in T.NOT_OPTIMIZER_WORDS):
            return True  # ``opts["G"].step()`` beside ``scaler.step(opts["D"])``
        if T.optimizer_like_name(recv):
            return True
        recv_node = cs.recv_node
        if recv_node is not None and isinstance(recv_node, (cst.Name, cst.Attribute, cst.Subscript)):
            return any(v.kind == "optimizer" for v in self.m.values.of(cs.func, recv_node))
        return False

    @property
    def fsdp_models(self) -> frozenset[str]:
        """Names bound to an FSDP-wrapped module (``model = FSDP(model)``)."""
        if self._fsdp is None:
            from .names import dotted_text

            out = set()
            for a in self.m.assignments:
                if isinstance(a.value, cst.Call):
                    q = self.m.imports.qualify(a.value.func) or dotted_text(a.value.func) or ""
                    if q in T.FSDP or q.rsplit(".", 1)[-1] in ("FSDP", "FullyShardedDataParallel"):
                        out.update(t for t in a.targets if t is not None)
            self._fsdp = frozenset(out)
        return self._fsdp

    def _optimizer_texts(self) -> set[str]:
        """Receivers stepped or unscaled through a scaler, and names bound to an optimizer."""
        from .syntax import expr_key

        out: set[str] = set()
        for c in self.m.calls:
            if c.method in ("step", "unscale_") and c.recv is not None and self.m.is_scaler(c.func, c.recv):
                a = c.arg(0, "optimizer")
                if a is not None:
                    k = expr_key(a.value)
                    if k is not None:
                        out.add(k)
        for a in self.m.assignments:
            if isinstance(a.value, cst.Call) and T.is_optimizer_class(self.m.imports.qualify(a.value.func)):
                out.update(t for t in a.targets if t is not None)
        return out


# --- gradients ---------------------------------------------------------------------------------


def receiver_chain(node: cst.CSTNode | None):
    """``node`` and its receivers: ``p.grad.abs().max`` -> the call, ``p.grad.abs``, ... ``p``."""
    n = node
    while n is not None:
        yield n
        if isinstance(n, (cst.Attribute, cst.Subscript)):
            n = n.value
        elif isinstance(n, cst.Call):
            n = n.func
        else:
            return


def _autograd_call(node) -> bool:
    """``torch.autograd.grad(...)[0]``: gradients of an input (AMP010's), not a parameter's
    ``.grad``."""
    return any(isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value == "grad"
               for n in receiver_chain(node))


#: torch's clip function names, as the attribute a configured clip object is kept under
_CLIP_NAMES = frozenset({"clip_grad_norm", "clip_grad_norm_", "clip_grad_value", "clip_grad_value_"})


def _back_propagator(recv: str) -> bool:
    """An object whose ``backward(loss)`` back-propagates its argument (accelerate, Lightning
    Fabric), not a tensor."""
    last = recv.rsplit(".", 1)[-1].lower()
    return "accelerat" in last or "fabric" in last


def mentions_grad(node: cst.CSTNode | None) -> bool:
    """``p.grad``, ``p.grad.data``, ``p.grad.detach()`` ...: the expression reads a ``.grad``."""
    return any(isinstance(n, cst.Attribute) and n.attr.value == "grad" for n in receiver_chain(node))


_GATHER = frozenset({"cat", "stack", "hstack", "vstack", "concat", "concatenate", "_flatten_dense_tensors"})


def reads_grads(node: cst.CSTNode | None) -> bool:
    """The expression is gradients: a ``.grad`` chain, or gradients gathered into one tensor
    (``torch.cat([p.grad.view(-1) for p in params])``, ``torch.stack([...])``)."""
    if mentions_grad(node):
        return True
    for n in receiver_chain(node):
        if isinstance(n, cst.Call) and isinstance(n.func, (cst.Attribute, cst.Name)) and n.args and (
                (n.func.attr if isinstance(n.func, cst.Attribute) else n.func).value in _GATHER):
            items = n.args[0].value
            if isinstance(items, (cst.ListComp, cst.GeneratorExp)):
                return mentions_grad(items.elt) and not predicate_chain(items.elt)
            if isinstance(items, (cst.List, cst.Tuple)):
                return any(mentions_grad(e.value) for e in items.elements if isinstance(e, cst.Element))
            return False
    return False


def _has_grads(node) -> bool:
    """Gradients somewhere in an arithmetic expression (``epsilon * p.grad``)."""
    if isinstance(node, cst.BinaryOperation):
        return _has_grads(node.left) or _has_grads(node.right)
    if isinstance(node, cst.UnaryOperation):
        return _has_grads(node.expression)
    return reads_grads(node)


def predicate_chain(node: cst.CSTNode | None) -> bool:
    """The method chain on a ``.grad`` goes through an element test (``isnan``, ``eq`` ...)."""
    return any(isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value in T.GRAD_PREDICATES
               for n in receiver_chain(node))


#: methods of an AMP helper object that step (or unscale) through the scaler it holds
_HELPER_STEPS = frozenset({"step", "unscale", "unscale_", "optimizer_step", "update"})


def steps_through_receiver(cs: CallSite) -> bool:
    """``R.backward(loss)`` of a function that also steps through ``R`` (``R.step(opt)``,
    ``R.scaler.step(opt)``): ``R`` is an AMP helper object holding the scaler, and its
    ``backward`` scales. (An object whose backward is followed by steps of optimizers it handed
    out, as ``accelerator.prepare`` does, stays a backward: its optimizers step through it.)"""
    recv = cs.recv
    if recv is None:
        return False
    return any(c.method in _HELPER_STEPS and c.recv is not None and (c.recv == recv or c.recv.startswith(recv + "."))
               for c in cs.func.calls)
