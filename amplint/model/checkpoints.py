"""Training checkpoints and whether they carry the GradScaler's state (read by AMP013).

A training checkpoint is a ``torch.save`` of an optimizer's ``state_dict()`` (in a file of its
own) or of a dict that holds optimizer state, whether the dict is written inline, built in a
variable (keys added by subscript), made by ``dict(...)``, returned by a helper of the file, or
handed to a helper that saves its parameter. Only code that trains with an enabled GradScaler
counts, and a module that saves or loads a scaler's state anywhere else is taken to handle it.
"""

from __future__ import annotations

import re

import libcst as cst

from .. import torch_api as T
from . import names as N
from .names import dotted_text
from .scalers import owner_class
from .usage import _sub_blocks, calls_in, facts, mentions, name_uses, scaler_ish

_OPT = T.OPTIMIZER_STATE_NAME
_SAVE_WORDS = ("save", "checkpoint", "ckpt", "state")
_MAX_DEPTH = 3


def checkpoints_without_scaler(model) -> list:
    """(report site or None, checkpoint dict) for every training checkpoint of the file that
    leaves the scaler's state out, in a module that never saves or loads it elsewhere."""
    hit = getattr(model, "_checkpoints_without_scaler", None)
    if hit is None:
        hit = model._checkpoints_without_scaler = _compute(model)
    return hit


def _compute(model) -> list:
    uf = facts(model)
    if not uf.calls("scale", "step"):
        scopes = _handed_to_training(model, uf)
        if not scopes:
            return _saved_for_importers(model)
    else:
        scopes = _training_scopes(model, uf)
        if not scopes:
            return []
    found = [(r, c) for r, c in _candidates(model, lambda f: _in_scope(model, f, scopes)) if c.is_checkpoint()]
    # a dict saved both directly and through a helper (``upload_to_s3(ckpt)``) is reported at
    # the direct ``torch.save``
    found.sort(key=lambda rc: 0 if rc[0] is not None and rc[0].qual in N.TORCH_SAVE else 1)
    # scaler state saved inside another checkpoint dict does not excuse this one
    inside = {id(call) for _r, c in found for v in c.values for call in _calls_in(v)}
    if not found or _state_handled(model, uf, inside):
        return []
    out = []
    reported: set[int] = set()
    for report, cand in found:
        if id(cand.node) in reported or cand.may_hold_scaler(model):
            continue
        reported.add(id(cand.node))
        out.append((report, cand))
    return out


def _handed_to_training(model, uf) -> set:
    """Owner classes (None: plain functions) of this module's enabled GradScaler constructors
    whose scaler the module's own flow follows into another project module that steps it
    (``train(model, data, optimizer, scaler)``, the loop of ``training/train.py``): the run
    trains with it, and this module's checkpoints are the run's, unless the stepping module
    saves or loads the scaler's state itself."""
    if model.project is None:
        return set()
    ctors = [c for c in uf.ctors
             if c.enabled is not False and c.targets and any(model.scalers.escapes(t) for t in c.targets)]
    if not ctors:
        return set()
    steppers = {o.func.owner_model for o in model.flow.observations
                if o.kind == "step" and getattr(o.func, "owner_model", model) is not model}
    if not steppers or any(_state_handled(m, facts(m), set()) for m in steppers):
        return set()
    return {c.scope for c in ctors}


def _saved_for_importers(model) -> list:
    """A saving helper of a module without a scaler (``utils/checkpoint.py``), called by the
    training code of a project module that trains with an enabled scaler, does not hand it the
    scaler and saves no scaler state anywhere: its checkpoint is that training's checkpoint."""
    found = [(r, c) for r, c in _candidates(model, lambda f: _trained_by_importer(model, f) or _inherited_by_training(model, f))
             if c.is_checkpoint()]
    return [(r, c) for r, c in found if not c.may_hold_scaler(model)]


def _inherited_by_training(model, func) -> bool:
    """A method of a mixin or base class (``CheckpointMixin.save_checkpoint``) that a class of
    an importing module inherits and trains with an enabled scaler, in a module that saves no
    scaler state: the checkpoint it writes is that training's."""
    if func.cls is None or model.project is None:
        return False
    for im in model.project.importer_models(model):
        uf = facts(im)
        if uf.calls("scale", "step"):
            scopes = _training_scopes(im, uf)
            if _heir(im, func, scopes) is not None and not _state_handled(im, uf, set()):
                return True
        if _heir_steps_through_attribute(im, func):
            return True
    return False


def _heir_steps_through_attribute(model, func) -> bool:
    """A class of ``model`` that inherits ``func`` steps a scaler through an object it holds
    (``self.amp.step(opt)``, the scaler ``self.amp.scaler`` built by a class of a third module),
    and neither module saves or loads a scaler's state."""
    heirs = {sub for sub in model.classes
             if sub is not func.cls and func.cls in model.scopes.mro(sub) and model.scopes.method(sub, func.name) is func}
    if not heirs or _state_handled(model, facts(model), set()):
        return False
    for o in model.flow.observations:
        if o.kind != "step" or not o.inlined or not (o.scaler or "").startswith("self."):
            continue
        if any(owner_class(r) in heirs for r in o.roots):
            stepper = getattr(o.func, "owner_model", model)
            if stepper is model or not _state_handled(stepper, facts(stepper), set()):
                return True
    return False


def _heir(model, func, scopes):
    """The training class of ``scopes`` that inherits ``func`` (a method of one of its bases)."""
    cls = func.cls
    for sub in scopes:
        if sub is not None and sub is not cls and cls in model.scopes.mro(sub) and model.scopes.method(sub, func.name) is func:
            return sub
    return None


def _trained_by_importer(model, func) -> bool:
    for im, call in model.external_calls(func):
        if any(scaler_ish(dotted_text(a.value) or "") or im.is_scaler(call.func, dotted_text(a.value))
               for a in call.node.args if dotted_text(a.value) is not None):
            continue  # the scaler is handed to the saver
        uf = facts(im)
        if not uf.calls("scale", "step"):
            # the caller builds an enabled scaler and hands it to the object that trains with
            # it (``trainer = LDMTrainer(unet, opt, scaler)``): the run's checkpoint is this one
            if any(c.site.func is call.func and c.enabled is not False and c.targets
                   and all(im.scalers.escapes(t) for t in c.targets) for c in uf.ctors) \
                    and not _state_handled(im, uf, set()):
                return True
            continue
        scopes = _training_scopes(im, uf)
        if scopes and _in_scope(im, call.func, scopes) and not _state_handled(im, uf, set()):
            return True
    return False


# --- which modules train with a scaler -------------------------------------------------


def _training_scopes(model, uf) -> set:
    """Owner classes (None: plain functions) whose code scales or steps through a scaler that
    is not literally disabled and that steps or updates (a scaler built there that only scales,
    stepped past by the optimizer and never handed on, keeps its initial scale: nothing to
    checkpoint; one that steps without update is a protocol with a missing update, AMP001)."""
    scopes = set()
    for c in uf.calls("scale", "step"):
        scopes.add(owner_class(c.func))
    updated = {owner_class(c.func) for c in uf.calls("update", "step")}
    out = set()
    for s in scopes:
        ctors = [c for c in uf.ctors if c.scope is s]
        if ctors and all(c.enabled is False for c in ctors):
            continue
        if ctors and s not in updated and not any(model.scalers.escapes(t) for c in ctors for t in c.targets):
            continue  # only scales (never steps nor updates): its scale never moves, no state to lose
        out.add(s)
    return out


def _in_scope(model, func, scopes) -> bool:
    """``func`` trains with an enabled scaler, calls code of this file that does, is called by
    such code, or belongs to a class that keeps a scaler as state (``self.scaler``) and trains
    with it."""
    from .usage import facts

    cls = owner_class(func)
    if cls not in scopes:
        # a method the training class inherits from a mixin or base of the file, or a module
        # function that the training class's code calls (``_save_checkpoint(cfg, net, opt)``)
        if func.cls is not None:
            return _heir(model, func, scopes) is not None
        return any(owner_class(caller) in scopes and owner_class(caller) is not None
                   for caller in _callers_of(model, func))
    uf = facts(model)
    touching = getattr(uf, "_amp013_touching", None)
    if touching is None:
        touching = {c.func for calls in uf.scaler_calls.values() for c in calls if _enabled(model, c.func, c.recv)}
        touching |= {c.site.func for c in uf.ctors if c.enabled is not False}
        uf._amp013_touching = touching
    frontier, seen = [func], {func}
    for _ in range(3):
        nxt = []
        for f in frontier:
            if f in touching:
                return True
            for c in f.calls:
                callee = model.callee_of(c)
                if callee is not None and callee not in seen:
                    seen.add(callee)
                    nxt.append(callee)
        frontier = nxt
    # a saving helper called from the training code (``save_checkpoint(model, optimizer, ...)``)
    frontier, seen = [func], {func}
    for _ in range(3):
        nxt = []
        for f in frontier:
            for caller, callees in model.static_callees.items():
                if f in callees and caller not in seen:
                    if caller in touching:
                        return True
                    seen.add(caller)
                    nxt.append(caller)
        frontier = nxt
    train_calls = [c for c in uf.calls("scale", "step") if _enabled(model, c.func, c.recv)]
    if cls is not None:
        return any(owner_class(c.func) is cls and (c.recv or "").startswith("self.") for c in train_calls)
    return any(c.recv in model.scalers.module_keys for c in train_calls)


def _callers_of(model, func, depth: int = 3) -> set:
    """The functions of the file that call ``func``, through ``depth`` levels."""
    found: set = set()
    frontier = {func}
    for _ in range(depth):
        frontier = {caller for caller, callees in model.static_callees.items() if callees & frontier} - found
        found |= frontier
    return found


def _enabled(model, func, key: str | None) -> bool:
    """False when every constructor bound to ``key`` (in its scope) says ``enabled=False``."""
    if key is None:
        return True
    kind, scope = model.scalers.scope_of(func, key)
    ctors = []
    for c in facts(model).ctors:
        if key not in c.targets:
            continue
        if kind == "local" and c.site.func is not func:
            continue
        if kind == "class" and c.scope is not scope:
            continue
        ctors.append(c)
    return not ctors or any(c.enabled is not False for c in ctors)


def _calls_in(node) -> list:
    return calls_in(node)


def _state_handled(model, uf, inside: set[int]) -> bool:
    """The module saves or loads scaler state somewhere (other than inside the checkpoint
    dicts under review: ``inside`` holds their calls), or hands the scaler to a saver."""
    from .usage import scaler_ish

    for c in model.calls:
        if id(c.node) in inside:
            continue
        if c.method in ("state_dict", "load_state_dict") and c.recv is not None:
            if scaler_ish(c.recv) or model.is_scaler(c.func, c.recv):
                return True
        callee = (c.text or "").lower()
        if any(w in callee for w in _SAVE_WORDS):
            for a in c.node.args:
                text = dotted_text(a.value)
                if text is not None and (scaler_ish(text) or model.is_scaler(c.func, text)):
                    return True
    return False


# --- checkpoint dicts ----------------------------------------------------------------------


class Cand:
    """A checkpoint dict under review."""
    __slots__ = ("node", "func", "stmt", "keys", "values", "unknown")

    def __init__(self, node, func, stmt, keys=None, values=None, unknown=False) -> None:
        self.node = node  # the Dict (or ``dict(...)`` Call)
        self.func = func  # the function that builds it
        self.stmt = stmt
        self.keys: list[str] = keys if keys is not None else []
        self.values: list = values if values is not None else []
        self.unknown = unknown  # ``**splat``, computed keys, ``.update()``, handed to other code

    def is_checkpoint(self) -> bool:
        from .usage import calls_in

        for k, v in zip(self.keys, self.values):
            if "optim" in k.lower() and not (isinstance(v, cst.Name) and v.value == "None"):
                return True
        for v in self.values:
            for call in calls_in(v):
                f = call.func
                if isinstance(f, cst.Attribute) and f.attr.value == "state_dict":
                    recv = dotted_text(f.value) or ""
                    if _OPT.search(recv.rsplit(".", 1)[-1]):
                        return True
        return False

    def may_hold_scaler(self, model) -> bool:
        if self.unknown:
            return True
        if any(_scaler_key(k) for k in self.keys):
            return True
        return any(mentions(v, lambda t: scaler_ish(t) or model.is_scaler(self.func, t)) for v in self.values)


def _scaler_key(key: str) -> bool:
    """A checkpoint key that may hold the scaler's state: ``scaler``, ``grad_scaler``,
    ``amp``, ``amp_state``, ``scale``, ``loss_scale``; not ``logit_scale`` (CLIP's temperature),
    ``clamp_max`` or ``sample_rate``."""
    low = key.lower()
    if "scaler" in low:
        return True
    words = [w for w in re.split(r"[^a-z0-9]+", re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", key).lower()) if w]
    return "amp" in words or "apex" in words or words == ["scale"] or "scale" in words and (
        "loss" in words or "grad" in words or "amp" in words)


def _candidates(model, in_scope):
    """``(report call site or None, Cand)`` for every dict that reaches a save (or is returned by
    a checkpoint-state method) in a function where ``in_scope(func)`` holds."""

    for site in model.calls:
        if site.qual not in N.TORCH_SAVE or site.in_lambda:
            continue
        obj = site.arg(0, "obj")
        if obj is None:
            continue
        value = obj.value
        param = _param_name(site.func, value)
        if param is not None:
            for caller, arg in model.callers_passing(site.func, param):
                if in_scope(caller.func):
                    for cand in _dicts(model, caller.func, arg, 0, caller):
                        yield caller, cand
            continue
        if not in_scope(site.func):
            continue
        for cand in _dicts(model, site.func, value, 0, site):
            yield site, cand
    if model.project is not None:
        yield from _handed_to_savers(model, in_scope)
    for func in model.functions:
        name = func.name.lower()
        if func.is_module or "load" in name or not ("checkpoint" in name or "ckpt" in name):
            continue
        if not in_scope(func):
            continue
        for ret in _returns(func):
            values = [ret]
            if isinstance(ret, cst.Call) and model.call_of.get(ret) is not None and model.callee_of(model.call_of[ret]) is None:
                values = [a.value for a in ret.args if isinstance(a.value, cst.Name)]  # a checkpoint object
            elif isinstance(ret, (cst.Tuple, cst.List)):
                values = [el.value for el in ret.elements if isinstance(el.value, (cst.Name, cst.Dict))]
            for v in values:
                for cand in _dicts(model, func, v, 0, ret):
                    yield None, cand


def _handed_to_savers(model, in_scope):
    """``(call site, Cand)`` for a dict handed to a function of another project module that
    saves that parameter with ``torch.save`` (``save_checkpoint(ckpt_state, is_best, save_dir)``
    of ``utils/checkpoint.py``): reported at the call, where the dict is built."""
    for site in model.calls:
        last = (site.text or "").rsplit(".", 1)[-1].lower()
        if site.in_lambda or site.qual in N.TORCH_SAVE or not any(w in last for w in ("save", "checkpoint", "ckpt")):
            continue
        if not in_scope(site.func):
            continue
        hit = model.target_of(site)
        if hit is None or hit[0] is model:
            continue
        other, callee = hit
        for index, param in _saved_params(other, callee):
            arg = site.argument_for(param, index, bound=callee.cls is not None and not callee.is_static)
            if arg is not None:
                for cand in _dicts(model, site.func, arg.value, 0, site):
                    yield site, cand


def _saved_params(model, func) -> list[tuple[int, str]]:
    """``(index, name)`` of the parameters of ``func`` that it saves with ``torch.save``."""
    out = []
    for c in func.calls:
        if c.qual in N.TORCH_SAVE and not c.in_lambda:
            first = c.node.args[0] if c.node.args else None
            if first is not None and first.star == "*" and isinstance(first.value, cst.Name) \
                    and first.value.value in func.star_params and first.value.value in func.params:
                # ``def save_on_master(*args, **kwargs): torch.save(*args, **kwargs)``: the first
                # argument after the named ones is the object saved
                out.append((func.params.index(first.value.value), first.value.value))
                continue
            obj = c.arg(0, "obj")
            param = _param_name(func, obj.value) if obj is not None else None
            if param is not None and all(p != param for _i, p in out):
                out.append((func.params.index(param), param))
    return out


def _param_name(func, value) -> str | None:
    if isinstance(value, cst.Name) and value.value in func.params and value.value not in func.assigned:
        return value.value
    return None


def _returns(func) -> list:
    out = []

    def walk(stmts) -> None:
        for s in stmts:
            if isinstance(s, cst.SimpleStatementLine):
                for small in s.body:
                    if isinstance(small, cst.Return) and small.value is not None:
                        out.append(small.value)
            elif not isinstance(s, (cst.FunctionDef, cst.ClassDef)):
                for part in _sub_blocks(s):
                    walk(part)

    walk(func.body)
    return out


def _dicts(model, func, value, depth: int, save_site) -> list[Cand]:
    """The checkpoint dicts an expression evaluates to (dict literals, ``dict(...)``, names
    bound to them, same-file helpers returning them)."""

    if depth > _MAX_DEPTH or value is None:
        return []
    if isinstance(value, (cst.Dict, cst.DictComp)):
        return [_from_dict(value, func, model)]
    if isinstance(value, cst.Call):
        if isinstance(value.func, cst.Name) and value.func.value == "dict":
            return [_from_dict_call(value, func)]
        inner = _passthrough(model, value)
        if inner is not None:
            return _dicts(model, func, inner, depth + 1, save_site)
        f = value.func
        recv = dotted_text(f.value) if isinstance(f, cst.Attribute) else None
        if recv is not None and f.attr.value == "state_dict" and not value.args and _OPT.search(
                recv.rsplit(".", 1)[-1]) and recv.split(".", 1)[0] not in set(func.params) - {"self", "cls"}:
            # ``torch.save(self.optimizer.state_dict(), "optimizer.pt")``: the optimizer's state
            # in a file of its own is a training checkpoint too (a helper saving the optimizer
            # it is handed, ``_save_optimizer(optimizer, path)``, is not the scaler owner's)
            return [Cand(value, func, None, ["optimizer"], [value])]
        site = model.call_of.get(value)
        callee = model.callee_of(site) if site is not None else None
        if callee is None:
            record = _record_class(model, value)
            return [_from_record(value, func, record)] if record is not None else []
        out = []
        for ret in _returns(callee):
            out.extend(_dicts(model, callee, ret, depth + 1, None))
        return out
    if isinstance(value, cst.Name):
        name = value.value
        bindings = _reaching(model, func, name, save_site)
        out = []
        for a in bindings:
            found = _dicts(model, func, a.value, depth + 1, save_site)
            for cand in found:
                if cand.stmt is None and cand.func is func:
                    cand.stmt = a.stmt
            out.extend(found)
        if out:
            sink = save_site.node if save_site is not None and hasattr(save_site, "node") else save_site
            _extend_by_subscripts(model, func, name, [c for c in out if c.func is func], sink)
        return out
    return []


def _reaching(model, func, name: str, site) -> list:
    """The assignments of ``name`` in ``func`` that can reach ``site``: the last one before it
    when nothing branches between them (``ckpt = {...}`` written again before a second save),
    else every one."""
    bindings = [a for a in model.assignments if a.func is func and name in a.targets]
    order = getattr(site, "order", None)
    if order is None or len(bindings) < 2:
        return bindings
    before = [b for b in model.bindings if b.func is func and b.name == name and b.kind == "assign" and b.order < order]
    if not before:
        return bindings
    last = max(before, key=lambda b: b.order)
    if tuple(last.arms) != tuple(site.arms)[:len(last.arms)]:
        return bindings  # assigned in a branch the save is not in: an earlier value may reach it
    if mentions(last.value, lambda t: t == name):
        return bindings  # ``ckpt = asdict(ckpt)``: built from the value before it
    return [a for a in bindings if a.stmt is last.stmt] or bindings


def _from_dict(node, func, model=None) -> Cand:
    """A dict literal or comprehension; a computed key is kept as its source text
    (``f"{name}_optim"``) so that what it names still counts."""
    cand = Cand(node, func, None)
    if isinstance(node, cst.DictComp):
        cand.keys.append(_key_text(model, node.key))
        cand.values.append(node.value)
        return cand
    for el in node.elements:
        if isinstance(el, cst.DictElement):
            k = el.key
            if isinstance(k, cst.SimpleString):
                cand.keys.append(str(k.evaluated_value))
            else:
                cand.keys.append(_key_text(model, k))
                if _opaque(el.value) and not isinstance(k, (cst.Integer, cst.Float)) and not _plain_data(model, func, el.value):
                    cand.unknown = True
            cand.values.append(el.value)
        elif not _known_kwargs(model, func, el.value, cand):
            cand.unknown = True  # ``**other``
    return cand


def _known_kwargs(model, func, value, cand) -> bool:
    """``**kwargs`` of ``func``'s own ``**kwargs`` parameter, every caller of the file known and
    passing plain keywords: those keys and values join the dict."""
    star = getattr(getattr(func.node, "params", None), "star_kwarg", None)
    if model is None or star is None or not isinstance(value, cst.Name) or value.value != star.name.value:
        return False
    calls = [c for c in model.calls if model.callee_of(c) is func]
    if not calls or any(a.star for c in calls for a in c.node.args):
        return False
    named = set(func.params)
    for c in calls:
        for a in c.node.args:
            if a.keyword is not None and a.keyword.value not in named:
                cand.keys.append(a.keyword.value)
                cand.values.append(a.value)
    return True


def _plain_data(model, func, value) -> bool:
    """A reference whose bindings all hold constants (``self.epoch`` set from ``1``, ``+= 1``):
    a counter, not the scaler's state."""
    key = dotted_text(value) if model is not None else None
    if key is None:
        return False
    bindings = model.values.bindings_of_key(func, key)
    return bool(bindings) and all(_arithmetic(b.value) or b.kind == "aug" or all(
        v.kind == "literal" for v in model.values.binding(b)) for b in bindings)


def _arithmetic(node) -> bool:
    """``state["epoch"] + 1``, ``-x``: a number (``|`` may merge dicts)."""
    return isinstance(node, cst.UnaryOperation) or (
        isinstance(node, cst.BinaryOperation) and not isinstance(node.operator, cst.BitOr))


def _opaque(value) -> bool:
    """A value that is just a reference (``value``, ``obj.attr``, ``items[k]``): with a computed
    key it may be anything, the scaler's state included."""
    return isinstance(value, (cst.Name, cst.Attribute, cst.Subscript))


def _key_text(model, key) -> str:
    if isinstance(key, (cst.Integer, cst.Float)) or model is None:
        return ""
    return model.code_for(key)


_AS_DICT = frozenset({"asdict", "dataclasses.asdict", "vars", "copy.copy", "copy.deepcopy"})


def _passthrough(model, call):
    """The object a call only re-packs (``asdict(snapshot)``, ``snapshot._asdict()``,
    ``vars(state)``, ``copy.deepcopy(ckpt)``): its checkpoint is its argument's."""
    if not isinstance(call, cst.Call):
        return None
    f = call.func
    if isinstance(f, cst.Attribute) and f.attr.value == "_asdict" and not call.args:
        return f.value
    if len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].star:
        return None
    text = dotted_text(f)
    qual = model.imports.resolve(text) if text is not None else None
    if text in ("vars", "asdict") and text in model.top.assigned:
        return None
    if (qual or text) in _AS_DICT:
        return call.args[0].value
    return None


def _record_class(model, call):
    """The file's own dataclass or NamedTuple that ``call`` constructs: its fields, in order,
    or None."""
    if not isinstance(call.func, cst.Name):
        return None
    cls = next((c for c in model.classes if c.name == call.func.value and c.parent is None), None)
    if cls is None:
        return None
    quals = [model.imports.resolve(b) or b for b in cls.bases]
    decorators = []
    for d in cls.node.decorators:
        node = d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator
        text = dotted_text(node)
        decorators.append(model.imports.resolve(text) or text if text else None)
    if not any(q in ("typing.NamedTuple", "NamedTuple") for q in quals) and not any(
        d in ("dataclasses.dataclass", "dataclass", "attr.s", "attrs.define", "attr.define") for d in decorators
    ):
        return None
    fields = []
    body = cls.node.body.body if isinstance(cls.node.body, cst.IndentedBlock) else ()
    for s in body:
        if isinstance(s, cst.SimpleStatementLine):
            for small in s.body:
                if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
                    fields.append(small.target.value)
    return fields


def _from_record(node, func, fields: list[str]) -> Cand:
    """``Snapshot(model_state=..., optimizer_state=...)``: a record's fields are its keys; a
    field that may hold a scaler's state, passed or defaulted, counts as such."""
    cand = Cand(node, func, None)
    for i, a in enumerate(node.args):
        if a.star:
            cand.unknown = True
        elif a.keyword is not None:
            cand.keys.append(a.keyword.value)
            cand.values.append(a.value)
        elif i < len(fields):
            cand.keys.append(fields[i])
            cand.values.append(a.value)
        else:
            cand.unknown = True
    passed = set(cand.keys)
    cand.keys.extend(f for f in fields if f not in passed)
    cand.values.extend(cst.Name("None") for f in fields if f not in passed)
    return cand


def _from_dict_call(node, func) -> Cand:
    cand = Cand(node, func, None)
    for a in node.args:
        if a.keyword is None:
            cand.unknown = True
            continue
        cand.keys.append(a.keyword.value)
        cand.values.append(a.value)
    return cand


def _extend_by_subscripts(model, func, name: str, cands: list[Cand], sink) -> None:
    """Follow the name a dict is bound to, from its binding to the next one: ``ckpt["k"] = v``
    adds a key; ``ckpt.update(...)``, a computed key, or handing the dict to code other than
    the save (``sink``, a call node) makes its content unknown."""

    uses = name_uses(func, {name})
    for cand in cands:
        if cand.stmt is None:
            continue
        body = getattr(cand.stmt, "body", ())
        start = next((u.index for u in uses if u.store and any(u.stmt is small for small in body)), None)
        if start is None:
            continue
        for u in uses:
            if u.index <= start:
                continue
            if u.store:
                break
            parent, fname = u.parent()
            if isinstance(parent, cst.Subscript) and fname == "value":
                above, _ = u.parent(2)
                if isinstance(above, cst.AssignTarget):
                    key = _subscript_key(parent)
                    assign = u.stmt
                    if not isinstance(assign, cst.Assign):
                        cand.unknown = True
                    else:
                        if key is None and _opaque(assign.value):
                            cand.unknown = True  # ``ckpt[name] = value``: anything, the scaler's state too
                        cand.keys.append(key if key is not None else model.code_for(parent.slice[0].slice))
                        cand.values.append(assign.value)
                continue
            if isinstance(parent, cst.Attribute) and fname == "value":
                if parent.attr.value == "update":
                    call, _ = u.parent(2)
                    merged = _merged(model, call)
                    if merged is None:
                        cand.unknown = True
                    else:
                        cand.keys.extend(merged.keys)
                        cand.values.extend(merged.values)
                        cand.unknown = cand.unknown or merged.unknown
                elif parent.attr.value in ("setdefault", "__setitem__", "__ior__"):
                    cand.unknown = True
                continue
            if isinstance(parent, cst.Arg):
                call, _ = u.parent(2)
                if call is sink or _passthrough(model, call) is not None:
                    continue
                site = model.call_of.get(call)
                if site is not None and (site.qual in N.TORCH_SAVE or _other_save(model, site)
                                         or _writes_as_is(model, site, u.node)):
                    continue
                cand.unknown = True
            if isinstance(parent, cst.AugAssign):
                cand.unknown = True


def _writes_as_is(model, site, arg_node) -> bool:
    """The call hands the dict to a function (of this or another project module) that saves
    that parameter with ``torch.save`` and adds nothing to it (``save_checkpoint(ckpt,
    "last.pt")`` called a second time)."""
    hit = model.target_of(site)
    if hit is None:
        return False
    other, callee = hit
    bound = callee.cls is not None and not callee.is_static
    for index, param in _saved_params(other, callee):
        arg = site.argument_for(param, index, bound=bound)
        if arg is not None and arg.value is arg_node:
            changed = any(b.func is callee and b.name == param and b.kind == "item" for b in other.bindings) or any(
                c.recv == param and c.method in ("update", "setdefault", "pop", "__setitem__") for c in callee.calls)
            return not changed
    return False


def _other_save(model, site) -> bool:
    """``xm.save(ckpt, path)``, ``accelerator.save(ckpt, path)``: another library's ``save`` of the
    dict (not a helper of this file, which may add keys) writes it as it is."""
    return (site.text or "").rsplit(".", 1)[-1] == "save" and model.callee_of(site) is None


def _merged(model, call) -> Cand | None:
    """What ``ckpt.update(...)`` adds: a dict literal or comprehension, or keywords."""
    if not isinstance(call, cst.Call) or len(call.args) != 1 or call.args[0].star:
        return None
    a = call.args[0]
    if a.keyword is not None:
        return _from_dict_call(call, None)
    if isinstance(a.value, (cst.Dict, cst.DictComp)):
        return _from_dict(a.value, None, model)
    return None


def _subscript_key(sub) -> str | None:
    if len(sub.slice) != 1 or not isinstance(sub.slice[0].slice, cst.Index):
        return None
    v = sub.slice[0].slice.value
    if isinstance(v, cst.SimpleString):
        return str(v.evaluated_value)
    return None


# --- the fix ---------------------------------------------------------------------------


