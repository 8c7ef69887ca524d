"""Calls into the analysed code: resolution and interpretation at the call site (the keys and
aliases they use are :mod:`.keys`).

A call of a function or method the model knows is interpreted at the call site, with its
parameters bound to the caller's expressions (``env``) and its locals renamed apart (``tag``);
results are memoised per (callee, bindings, regions, input states). A callee that cannot touch
a scaler (no protocol event, no scaler name, does not hand ``self`` on) is skipped. Objects
built by a class of the file that keeps a constructor argument as ``self.<attr>`` alias it
(``w = Wrapper(scaler)``: ``w.scaler`` is ``scaler``).

A function analysed on its own, with no caller the model can see and no backward of its own,
starts in the state its own protocol implies: when it steps or unscales a scaler it did not
build, that scaler's gradients arrive scaled (``IMPLIED``), so a clip before its ``unscale_`` is
seen whoever calls it (when the same path goes on to that scaler's step).
"""

from __future__ import annotations


import libcst as cst

from ..scopes import owner_class
from ..structure import CallSite, FunctionInfo
from ..syntax import expr_key
from .keys import Keys
from .state import IMPLIED, NOFACTS, State

MAX_DEPTH = 4


def target_heads(node: cst.CSTNode) -> frozenset[str]:
    out: set[str] = set()
    if isinstance(node, (cst.Name, cst.Attribute, cst.Subscript)):
        k = expr_key(node)  # type: ignore[arg-type]
        if k is not None:
            out.add(k)
    elif isinstance(node, (cst.Tuple, cst.List)):
        for el in node.elements:
            out |= target_heads(el.value)
    elif isinstance(node, cst.StarredElement):
        out |= target_heads(node.value)
    return frozenset(out)


class Interproc(Keys):
    """Mixin of :class:`~.interpret.Flow`."""

    def _init_interproc(self) -> None:
        m = self.m
        self._memo: dict[tuple, set[State]] = {}
        self._anonymous: dict = {}
        self._stored: dict[int, dict[str, str]] = {}
        self._transparency: dict[FunctionInfo, bool] = {}
        self._attrs_memo: dict[FunctionInfo, frozenset[str]] = {}
        self._dispatch_memo: dict[tuple, list] = {}
        self._hook_memo: dict[str, list] = {}
        self._create_obs: dict[cst.CSTNode, object] = {}
        self._run_funcs: dict = {}
        # root-space keys an object keeps for another one (``w.grad_scaler`` -> ``scaler``)
        self.object_aliases: dict[str, str] = {}
        self._tables: dict[int, tuple[dict, dict]] = {}
        self._scaler_names = self._names_of_scalers()
        self._callers = {c for cs in m.static_callees.values() for c in cs}
        self.virtual = self._virtual_roots()

    # --- keys --------------------------------------------------------------------------------

    # objects of the analysed classes, per module (a project module's are read before its
    # model joins the flow: ``transparent`` asks about its methods first)
    def _virtual_roots(self) -> list[tuple[FunctionInfo, object]]:
        """``(inherited method, subclass)``: a method of a base class (of this file or another
        module) that calls a hook on ``self`` which the subclass overrides with protocol code of its
        own: it is analysed as the subclass runs it, so the subclass's hook is the one called."""
        out = []
        scopes = self.m.scopes
        for model in list(getattr(self.m, "_roots", [self.m])):
            for cls in model.classes:
                mro = scopes.mro(cls)
                if len(mro) < 2:
                    continue
                for base in mro[1:]:
                    for name, fn in base.methods.items():
                        if scopes.method(cls, name) is not fn:
                            continue  # overridden: the subclass's own is analysed anyway
                        hooks = [scopes.method(cls, c.method) for c in fn.calls if c.recv == "self" and c.method
                                 and scopes.method(cls, c.method) is not scopes.method(base, c.method)]
                        hooks = [h for h in hooks if h is not None]
                        # a hook without protocol events leaves the base's own analysis as it is
                        if any(self._touches(h) for h in hooks):
                            out.append((fn, cls))
                            if getattr(fn, "owner_model", None) is not None and hasattr(self.m, "add"):
                                self.admit(fn.owner_model)
        return out

    def _touches(self, fn) -> bool:
        model = getattr(fn, "owner_model", None) or self.m
        return fn in model.relevant_functions()

    # --- entry -------------------------------------------------------------------------------

    def entry_states(self, func: FunctionInfo) -> set[State]:
        """The states a function analysed on its own starts in (see the module doc)."""
        owner = getattr(func, "owner_model", None)
        if func in self._callers or func.is_module or self.m.has_backward(func) or (
                owner is not None and owner.has_external_callers(func)):
            return {State()}  # called here, or runs its own backward: no assumption needed
        frame = self.root_frame(func)
        built = {b.name for b in self.m.bindings if b.func is func and b.kind in ("assign", "ann")
                 and self.scalers.ctor_in(b.value) is not None}
        implied = []
        for c in func.calls:
            ev = self.events.of(c)
            if ev.kind == "scaler" and c.method in ("step", "unscale_") and c.recv not in built:
                key = self.canon(frame, c.recv) or c.recv
                if key not in implied:
                    implied.append(key)
        if not implied:
            return {State()}
        scalers = tuple(sorted((k, NOFACTS.but(grads=(IMPLIED, None))) for k in implied))
        return {State(scalers=scalers)}

    # --- resolution --------------------------------------------------------------------------

    def resolve(self, frame, cs: CallSite) -> tuple[FunctionInfo, str | None, object] | None:
        """``(callee, receiver key bound to its self, the class self is)`` for a call of the
        analysed code: a local or module function, a method of ``self`` (dispatched on the class
        ``self`` really is), ``super().m()``, a static/class method, a method of an object of a
        known class, or (in a project) a function or class of another module."""
        text = cs.text
        func = frame.func
        scopes = self.m.scopes
        cls = frame.self_cls or owner_class(func)
        if text is None:
            target = self._super_method(func, cs, cls)
            return (target, "self", cls) if target is not None else None  # hooks dispatch on self's class
        if "." not in text:
            f2: FunctionInfo | None = func
            while f2 is not None:
                d = f2.local_defs.get(text)
                if d is not None:
                    return d, None, None
                if f2.is_local(text) and not self._import_binding(f2, text):
                    break
                f2 = f2.parent
            inst = self.instance(func, func, text) or (
                self.instance(func, None, text) if f2 is None else self.held_instance(frame, frame.env.get(text)))
            if inst is not None:  # ``hook(model)``, ``loss_scaler(loss, opt)``: the object's ``__call__``
                target = scopes.method(inst, "__call__")
                return (target, text, inst) if target is not None else None
            return self._project_function(frame, text) if f2 is None else None
        head, _, attr = text.rpartition(".")
        if head in ("self", "cls") and cls is not None:
            target = scopes.method(cls, attr)
            if target is None and head == "self":
                inst = self.instance(func, owner_class(func), text)
                if inst is not None:  # ``self.clip(model)``: an attribute holding an object
                    target = scopes.method(inst, "__call__")
                    return (target, text, inst) if target is not None else None
            return (target, head, frame.self_cls) if target is not None else None
        named = scopes.classes_named(head, func)
        if named:
            target = scopes.method(named[0], attr)
            if target is not None and (target.is_static or target.is_classmethod):
                return target, None, None
            return None
        if head.startswith("self.") and owner_class(func) is not None:
            inst = self.instance(func, owner_class(func), head)
        else:
            inst = self.instance(func, func, head) or self.instance(func, None, head) or self.held_instance(
                frame, frame.env.get(head))
        if inst is None:
            inst = self.typed_class(frame.func, cs)
        if inst is not None:
            target = scopes.method(inst, attr)
            if target is not None:
                return target, head, inst
            return None
        return self._project_function(frame, text)

    def _import_binding(self, func, name: str) -> bool:
        return all(b.kind == "import" for b in self.m.scopes.local(func, name))

    def _project_function(self, frame, text: str):
        """A function of another project module, named through this module's imports."""
        model = getattr(frame.func, "owner_model", None)
        link = getattr(model, "project", None)
        if link is None:
            return None
        head = text.split(".", 1)[0]
        if frame.func.is_local(head) and not self._import_binding(frame.func, head):
            return None
        qual = model.imports.resolve(text)
        hit = link.symbol(qual) if qual is not None else None
        if hit is None or hasattr(hit[1], "methods") or hit[1].cls is not None:
            return None  # a class (its constructor) or a method: not a call of that function
        self.admit(hit[0])
        return hit[1], None, None

    def inline(self, frame, cs: CallSite, callee: FunctionInfo, self_key: str | None, states: set[State],
               self_cls=None) -> set[State]:
        from .frames import Frame

        if frame.depth >= MAX_DEPTH or callee in frame.stack:
            return self.unknown_call(frame, cs, states)
        model = getattr(callee, "owner_model", None)
        if model is not None:
            self.admit(model)
        env: dict[str, str] = {}
        scaler_params: set[str] = set()
        params = list(callee.params)
        bound_self = callee.cls is not None and not callee.is_static and (self_key is not None or callee.is_classmethod)
        if bound_self and params:
            first = params.pop(0)
            if self_key is not None:
                env[first] = self.canon(frame, self_key) or self_key
        positional = [a for a in cs.node.args if a.keyword is None and not a.star]
        for p, a in zip([p for p in params if p not in callee.kwonly], positional):
            self._bind(frame, env, scaler_params, p, a.value)
        for a in cs.node.args:
            if a.keyword is not None and a.keyword.value in params:
                self._bind(frame, env, scaler_params, a.keyword.value, a.value)
        regions = frame.ctx_regions + cs.regions
        if self._covered_by_root(cs, callee, regions, scaler_params, states):
            return states
        tag = f"{callee.qualname}#{frame.depth + 1}."
        entry = None
        if callee.cls is None and not scaler_params:
            # (the outermost call of a utility, of this module or another, that never meets a
            # scaler and back-propagates nothing: where the user's code calls it)
            entry = frame.entry or (cs if self._utility(callee) else None)
        yt = self._yield_to.get(cs.node)
        yt = yt if yt is not None and yt.callee is callee else None
        key = (callee, tuple(sorted(env.items())), tuple(id(r) for r in regions), frozenset(states), self._loop_depth,
               id(self_cls), entry.node if entry is not None else None)
        hit = self._memo.get(key) if yt is None else None  # (a ``with`` body runs at its yield: not memoised)
        if hit is not None:
            return set(hit)
        sub = Frame(callee, env, tag, regions, frame.depth + 1, frame.stack + (callee,), frozenset(scaler_params),
                    self_cls if bound_self else None, entry, yt)
        o = self.block(sub, callee.body, states)
        result = self._strip_frame(o.normal | o.ret, tag)
        if not result and states and callee.cls is not None:
            # a method that always raises (``raise NotImplementedError``): subclasses override it
            result = self.unknown_call(frame, cs, states)
        if yt is None:
            self._memo[key] = result
        return set(result)

    def _utility(self, func: FunctionInfo) -> bool:
        """A plain function of this module that neither meets a scaler nor back-propagates
        (``clip_gradients(model, 1.0)``, ``log_grad_norm(model)``): what it does to gradients is
        right or wrong where it is called."""
        owner = getattr(func, "owner_model", None) or self.m
        return not owner.has_backward(func) and not self.may_touch_scaler(func)

    def _covered_by_root(self, cs: CallSite, callee: FunctionInfo, regions: tuple, scaler_params: set,
                         states: set[State]) -> bool:
        """A call, outside every loop and region, of a function of this module that is analysed
        as a root of its own, from paths that hold no scaler (``main()`` calling ``train()``), when
        every scaler of the module lives in a function's locals: following the call would
        repeat the callee's own analysis (its scalers are the callee's and are forgotten when it
        returns), so the caller's paths go on as they were."""
        if (callee.cls is not None or regions or scaler_params or cs.loops or self._loop_depth
                or callee not in self.root_set or not self._local_scalers_only()):
            return False
        return all(not st.scalers for st in states)

    def _local_scalers_only(self) -> bool:
        hit = self._locals_only
        if hit is None:
            m = self.m
            hit = self._locals_only = all(
                _head(c.recv) != "self" and not c.func.is_module and c.func.is_local(_head(c.recv))
                for c in m.calls if c.recv is not None and self.events.of(c).kind == "scaler")
        return hit

    _locals_only: bool | None = None

    def _bind(self, frame, env: dict, scaler_params: set, param: str, value: cst.BaseExpression) -> None:
        key = expr_key(value)
        if key is None:
            # a constant string stays itself (``self._fire("on_after_backward")``: the hook name)
            env[param] = value.value if isinstance(value, cst.SimpleString) else self.anonymous(value)
            return
        env[param] = self.canon(frame, key) or key
        if self.is_scaler(frame, key):
            scaler_params.add(param)

    def _strip_frame(self, states: set[State], tag: str) -> set[State]:
        """The callee returned: its conditions, scaled names and the scalers its locals held are
        gone (a scaler it built and stepped is no fact about the caller's gradients)."""
        out = set()
        for st in states:
            if any(k.startswith(tag) for k, _f in st.scalers):
                st = State(st.path, tuple((k, f) for k, f in st.scalers if not k.startswith(tag)), st.mon)
            p = st.path
            if any(k.startswith(tag) for k, _ in p.assume) or any(n.startswith(tag) for n, _ in p.scaled):
                st = st.with_path(assume=frozenset(x for x in p.assume if not x[0].startswith(tag)),
                                  scaled=frozenset(x for x in p.scaled if not x[0].startswith(tag)))
            out.add(st)
        return out

    # --- loops over optimizers ----------------------------------------------------------------


def _head(key: str) -> str:
    return key.split(".", 1)[0].split("[", 1)[0]
