"""The file's own code as the interpreter sees it: callees that cannot touch a scaler (skipped),
and objects of the file's classes that keep another object (``w = Wrapper(scaler)``: ``w.scaler``
is ``scaler``)."""

from __future__ import annotations

import libcst as cst

from ... import torch_api as T
from .. import names as N
from ..scopes import owner_class
from ..structure import CallSite, FunctionInfo
from ..syntax import expr_key
from .state import State

#: the methods of :data:`_EVENT_CALLS` that are events only on a GradScaler
_SCALER_ONLY = frozenset({"scale", "unscale_", "update"})
_EVENT_CALLS = frozenset({
    "scale", "unscale_", "step", "update", "backward", "zero_grad", "norm", "clip_grad_norm_", "clip_grad_value_",
    "clip_grads_with_norm_", "get_total_norm", "load_state_dict", "cast",
})


#: the most classes one call on a receiver of several known types is followed into
MAX_DISPATCH = 8


class Objects:
    """Mixin of :class:`~.interpret.Flow` (through :class:`~.interproc.Interproc`)."""

    # --- callees that cannot touch a scaler ------------------------------------------------------

    def is_event_site(self, c: CallSite) -> bool:
        ev = self.events.of(c)
        if ev.kind in ("scaler", "backward", "clip", "zero_grad", "opt_step", "create"):
            return True
        callee = self.m.callee_of(c)
        return callee is not None and callee in self.m.relevant_set

    def transparent(self, func: FunctionInfo) -> bool:
        """``func`` (and what it calls in this file) has no event the interpreter reads: no scaler
        method, backward, step, zero_grad, clip or norm call, no GradScaler constructor, no
        mention of a scaler's name, and it hands ``self`` to no other code."""
        hit = self._transparency.get(func)
        if hit is not None:
            return hit
        self._transparency[func] = False  # recursion: assume it matters
        result = self._compute_transparent(func)
        self._transparency[func] = result
        return result

    def _plain_local(self, func: FunctionInfo, recv: str | None) -> bool:
        """``recv`` is a local variable of ``func`` (no parameter, no global, no attribute) that
        holds no scaler anywhere in the file: ``metrics.update(stats)`` is no scaler event."""
        return (recv is not None and recv.isidentifier() and recv not in self._scaler_names
                and recv not in func.params and func.is_local(recv))

    def _compute_transparent(self, func: FunctionInfo) -> bool:
        names = self._scaler_names
        cls = owner_class(func)
        for c in func.calls:
            last = (c.text or c.method or "").rsplit(".", 1)[-1]
            if last in _EVENT_CALLS or (c.method is not None and c.method in _EVENT_CALLS) or T.BACKWARD_LIKE.match(last):
                if not (last in _SCALER_ONLY and (self._plain_local(func, c.recv) or not c.may_be_scaler_method())):
                    return False
            if self.events.of(c).kind in ("clip", "create", "backward", "scaler"):
                return False
            if any(expr_key(a.value) in ("self", "cls") for a in c.node.args):
                return False
            if N.calls_by_name(c.node):
                return False  # a hook called by name (a callback handler's ``getattr(cb, event)(trainer)``)
            if c.text is None and isinstance(c.node.func, cst.Attribute) and isinstance(c.node.func.value, cst.Call):
                inner = c.node.func.value.func
                if isinstance(inner, cst.Name) and inner.value == "super":
                    return False
            callee = self.m.callee_of(c) or self.instance_method(func, c)
            if callee is not None:
                if not self.transparent(callee):
                    return False
            elif c.recv in ("self", "cls") and (cls is None or c.method not in self.m.self_attrs.get(cls, ())):
                return False  # an inherited method of unknown code
            if any(part in names for part in (c.recv or "").split(".")):
                return False
        for text in self.m.value_texts.get(func, ()):
            if any(part in names for part in text.split(".")):
                return False
        for b in self.m.bindings:
            if b.func is func and b.kind != "param" and b.name.rsplit(".", 1)[-1] in names:
                return False
        for d in func.local_defs.values():
            if not self.transparent(d):
                return False
        return True

    def instance_method(self, func: FunctionInfo, c: CallSite) -> FunctionInfo | None:
        """The method a call on an object of a known class runs (``self.engine.step(x)``,
        ``runner.run()``, ``self.hook(model)``: its ``__call__``)."""
        text = c.text
        if text is None:
            return None
        head, _, attr = text.rpartition(".")
        cls = owner_class(func)
        for key, name in ((text, "__call__"), (head, attr)):
            if not key:
                continue
            scope = cls if key.startswith("self.") else func
            inst = self.instance(func, scope, key) or (None if key.startswith("self.") else self.instance(func, None, key))
            if inst is not None:
                return self.m.scopes.method(inst, name)
        cls = self.typed_class(func, c) if c.method is not None else None
        return self.m.scopes.method(cls, c.method) if cls is not None else None

    def typed_class(self, func, cs: CallSite):
        """The one class of the project whose method a call on a receiver of known type runs,
        as the value layer knows the receiver: an object built from a class of the file, or a
        name annotated with a project class (``task: BaseTask = ...`` returned by a getter).
        Candidates without that method are dropped (a DDP wrapper it may also be); None when
        unknown or ambiguous."""
        recv = cs.recv_node
        if cs.method is None or not isinstance(recv, (cst.Name, cst.Attribute)) or (
                cs.recv or "").split(".", 1)[0] in ("self", "cls"):
            return None
        found = None
        for v in self.m.values.of(func, recv):
            if v.kind == "instance" and v.data is not None:
                cls = v.data
            elif v.kind == "other" and isinstance(v.data, str):
                cls = self._project_class(func, v.data)
            else:
                continue
            if cls is None or self.m.scopes.method(cls, cs.method) is None:
                continue
            if found is not None and found is not cls:
                return None
            found = cls
        return found

    def dispatch_classes(self, func, cs: CallSite) -> list:
        """:meth:`typed_classes`, once per call site."""
        key = (id(func), cs.node)
        hit = self._dispatch_memo.get(key)
        if hit is None:
            hit = self._dispatch_memo[key] = self.typed_classes(func, cs) if cs.recv is not None else []
        return hit

    def typed_classes(self, func, cs: CallSite) -> list:
        """Every class a call on a receiver of known types may run the method of, when the value
        layer knows each value the receiver holds (``for hook in self.hooks: hook.after_step(self)``
        with ``self.hooks = [GradNormMonitor(), CodebookUsageMonitor()]``); empty when one of them
        is unknown. At most :data:`MAX_DISPATCH`."""
        recv = cs.recv_node
        if cs.method is None or not isinstance(recv, (cst.Name, cst.Attribute)) or (
                cs.recv or "").split(".", 1)[0] in ("self", "cls"):
            return []
        out: list = []
        for v in self.m.values.of(func, recv):
            cls = None
            if v.kind == "instance" and v.data is not None:
                cls = v.data
            elif v.kind == "other" and isinstance(v.data, str):
                cls = self._project_class(func, v.data)
            if cls is None:
                return []
            if self.m.scopes.method(cls, cs.method) is not None and cls not in out:
                out.append(cls)
        return out if len(out) <= MAX_DISPATCH else []

    def _project_class(self, func, qual: str):
        named = self.m.scopes.classes_named(qual, func)
        if named:
            return named[0]
        model = getattr(func, "owner_model", None)
        hit = model.project.symbol(qual) if model is not None and model.project is not None else None
        return hit[1] if hit is not None and hasattr(hit[1], "methods") else None

    def _super_method(self, func: FunctionInfo, c, cls=None) -> FunctionInfo | None:
        """``super().m(...)`` in a method of ``func``'s class: ``m`` of the first class (of any
        project module) after it in the MRO of ``cls``, the class ``self`` really is (by default
        ``func``'s own)."""
        f = c.node.func
        cls = cls or owner_class(func)
        if c.text is not None or not isinstance(f, cst.Attribute) or not isinstance(f.value, cst.Call) \
                or not isinstance(f.value.func, cst.Name) or f.value.func.value != "super" or cls is None:
            return None
        mro = self.m.scopes.mro(cls)
        start = owner_class(func)
        for base in mro[mro.index(start) + 1:] if start in mro else mro[1:]:
            m = base.methods.get(f.attr.value)
            if m is not None:
                return m
        return None

    def may_touch_scaler(self, func: FunctionInfo) -> bool:
        """``func`` (or what it calls) can meet a scaler: a scaler call or constructor, a name that
        holds a scaler somewhere (as a receiver, an argument or a value), or a call the
        interpreter cannot follow on ``self``. A function that cannot is no root of the flow: its
        backwards and optimizer steps carry no scaler facts for any rule to read."""
        memo = self._touch_memo
        hit = memo.get(func)
        if hit is not None:
            return hit
        memo[func] = True  # recursion: assume it may
        names = self._scaler_names
        hit = False
        for c in func.calls:
            kind = self.events.of(c).kind
            parts = (c.recv or "").split(".")
            args = [expr_key(a.value) or "" for a in c.node.args]
            if kind in ("scaler", "create") or any(p in names for p in parts) or any(
                    p in names for a in args for p in a.split(".")):
                hit = True
                break
            callee = self.m.callee_of(c) or self.instance_method(func, c) or self._super_method(func, c)
            if callee is not None and callee is not func and self.may_touch_scaler(callee):
                hit = True
                break
        if not hit:
            hit = any(p in names for t in self.m.value_texts.get(func, ()) for p in t.split(".")) or any(
                self.may_touch_scaler(d) for d in func.local_defs.values())
        memo[func] = hit
        return hit

    def passes_scaler(self, frame, cs: CallSite) -> bool:
        """``cs`` hands over a scaler, or an object of a class of the project whose methods meet
        one (``train_one_epoch(model, loader, loss_scaler)`` with ``loss_scaler = NativeScaler()``)."""
        for a in cs.node.args:
            key = expr_key(a.value)
            if key is None:
                continue
            if self.is_scaler(frame, key):
                return True
            cls = self.held_instance(frame, self.canon(frame, key))
            if cls is not None and any(self.may_touch_scaler(m) for m in cls.methods.values()):
                return True
        return False

    def skip_transparent(self, frame, func: FunctionInfo, self_key: str | None, states: set[State]) -> set[State]:
        attrs = self._assigned_attrs(func)
        if not attrs or self_key is None:
            return states
        return self.rebind(frame, {f"{self_key}.{a}" for a in attrs}, states)

    def _assigned_attrs(self, func: FunctionInfo) -> frozenset[str]:
        """``self.<attr>`` names a method (and its in-file callees) assigns."""
        hit = self._attrs_memo.get(func)
        if hit is None:
            self._attrs_memo[func] = frozenset()
            out = {b.name[5:] for b in self.m.bindings if b.func is func and b.name.startswith("self.")}
            for c in func.calls:
                callee = self.m.callee_of(c)
                if callee is not None and c.recv in ("self", "cls"):
                    out |= self._assigned_attrs(callee)
            hit = self._attrs_memo[func] = frozenset(out)
        return hit

    # --- objects of the file's classes -------------------------------------------------------------

    def built_class(self, frame, value):
        """The class of the file or project a value constructs (``Wrapper(...)``, also one arm
        of ``Hook(...) if cfg.clip else None``)."""
        return self.built_class_in(frame.func, value)

    def note_constructor_aliases(self, frame, ckey: str, cls, value: cst.BaseExpression) -> None:
        func = frame.func
        own = owner_class(func) if func.name == "__init__" and ckey.startswith("self.") else None
        for call in _constructions(value):
            pairs = self._constructor_aliases(cls, call)
            for attr, arg in pairs:
                key = expr_key(arg)
                if key is None:
                    # an argument built right there (``Trainer(model, GradScaler("cuda"))``) kept
                    # as ``self.scaler`` and handed on as ``self.bundle.scaler``: one object
                    kept = sorted((a for a, g in pairs if g is arg), key=lambda a: (a.count("."), a))
                    if kept and kept[0] != attr:
                        self.object_aliases[f"{ckey}.{attr}"] = f"{ckey}.{kept[0]}"
                    continue
                if own is not None and key in func.params:
                    # ``self.scaler = scaler`` beside ``self.bundle = Bundle(model, scaler)``: the
                    # bundle's scaler is the object's ``self.scaler``, not ``__init__``'s parameter
                    kept = [x for x in self._stored_params(own).get(key, ()) if "." not in x]
                    key = f"self.{kept[0]}" if kept else key
                src = self.canon(frame, key)
                if src is not None:
                    self.object_aliases[f"{ckey}.{attr}"] = src

    def _instance_vars(self, model) -> dict[tuple, object]:
        """Names ``model``'s code binds to an object of a class of the project: (scope, name) ->
        ClassInfo, the scope being the function, None for module names, or the class for
        ``self.<attr>``."""
        out: dict[tuple, object] = {}
        for a in model.assignments:
            for call in _constructions(a.value):
                named = self.m.scopes.classes_named(call.func.value, a.func)
                if not named:
                    continue
                for t in a.targets:
                    if t is None:
                        continue
                    if t.startswith("self.") and owner_class(a.func) is not None:
                        out[(owner_class(a.func), t)] = named[0]
                    else:
                        out[(None if a.func.is_module else a.func, t)] = named[0]
                break
        return out

    def _stored_params(self, cls, _depth: int = 0) -> dict[str, list[str]]:
        """What ``cls.__init__`` keeps of each parameter: param -> attribute paths, ``self.<attr> =
        <param>`` giving ``attr`` and ``self.<attr> = Other(..., <param>, ...)``, where ``Other``
        keeps it as ``inner``, giving ``attr.inner`` (a scaler handed through two constructors)."""
        hit = self._stored.get(id(cls))
        if hit is None:
            self._stored[id(cls)] = {}  # a class that builds itself: nothing more
            hit = {}
            init = self.m.scopes.method(cls, "__init__")
            if init is not None:
                for b in (getattr(init, "owner_model", None) or self.m).bindings:
                    if b.func is not init or b.kind != "assign" or not b.name.startswith("self.") or b.name.count(".") != 1:
                        continue
                    if isinstance(b.value, cst.Name) and b.value.value in init.params:
                        hit.setdefault(b.value.value, []).append(b.name[5:])
                    elif _depth < 3:
                        inner = self.built_class_in(init, b.value)
                        for call in _constructions(b.value) if inner is not None else ():
                            for attr, arg in self._constructor_aliases(inner, call, _depth + 1):
                                if isinstance(arg, cst.Name) and arg.value in init.params:
                                    hit.setdefault(arg.value, []).append(f"{b.name[5:]}.{attr}")
            self._stored[id(cls)] = hit
        return hit

    def built_class_in(self, func: FunctionInfo, value):
        for call in _constructions(value):
            named = self.m.scopes.classes_named(call.func.value, func)
            if named:
                return named[0]
        return None

    def _constructor_aliases(self, cls, call: cst.Call, _depth: int = 0) -> list[tuple[str, cst.BaseExpression]]:
        stored = self._stored_params(cls, _depth)
        if not stored:
            return []
        init = self.m.scopes.method(cls, "__init__")
        params = [p for p in init.params[1:] if p not in init.kwonly]  # type: ignore[union-attr]
        out = []
        positional = [a for a in call.args if a.keyword is None and not a.star]
        for p, a in zip(params, positional):
            out.extend((attr, a.value) for attr in stored.get(p, ()))
        for a in call.args:
            if a.keyword is not None:
                out.extend((attr, a.value) for attr in stored.get(a.keyword.value, ()))
        return out

    def _class_aliases(self, model, instances: dict) -> dict[object, dict[str, str]]:
        """``self.w = Wrapper(self.scaler)`` where Wrapper keeps it as ``self.grad_scaler``:
        per class, ``self.w.grad_scaler`` -> ``self.scaler``."""
        out: dict[object, dict[str, str]] = {}
        for (scope, target), cls in instances.items():
            if not isinstance(target, str) or not target.startswith("self."):
                continue
            for a in model.assignments:
                if owner_class(a.func) is not scope or target not in a.targets:
                    continue
                for call in _constructions(a.value):
                    for attr, arg in self._constructor_aliases(cls, call):
                        src = expr_key(arg)
                        if src is not None and src.startswith("self."):
                            out.setdefault(scope, {})[f"{target}.{attr}"] = src
        return out

    def _names_of_scalers(self) -> frozenset[str]:
        """Every name component that holds a scaler somewhere in the file, the configured names,
        and any name mentioning scaler."""
        module, classes, local = self.scalers._tables()
        keys: set[str] = set(module)
        for group in (classes, local):
            for ks in group.values():
                keys |= set(ks)
        keys |= set(self.scalers.extra)
        names = {k.rsplit(".", 1)[-1] for k in keys}
        for texts in self.m.value_texts.values():
            names.update(p for t in texts for p in t.split(".") if "scaler" in p.lower())
        return frozenset(names)


def _constructions(value) -> list[cst.Call]:
    """The calls of a plain name a value may be: ``C(...)``, either arm of ``C(...) if c else
    None``, either side of ``a or C(...)``."""
    if isinstance(value, cst.Call):
        return [value] if isinstance(value.func, cst.Name) else []
    if isinstance(value, cst.IfExp):
        return _constructions(value.body) + _constructions(value.orelse)
    if isinstance(value, cst.BooleanOperation):
        return _constructions(value.left) + _constructions(value.right)
    return []
