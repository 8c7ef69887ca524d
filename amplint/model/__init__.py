"""The per-file AMP model, built once per file and read by every rule.

- ``imports``      the torch AMP family through imports and aliases (:mod:`.names`);
- ``functions``, ``classes``, ``calls``, ``assignments``, ``refs``: the file's structure;
- ``regions``      autocast / grad-disabled / eval regions (:class:`.structure.Region`);
- ``scopes``       bindings and scopes (:mod:`.scopes`); ``values`` what names hold (:mod:`.values`);
- ``scalers``      which names hold a GradScaler (:mod:`.scalers`);
- ``events``       every call site classified once (:mod:`.events`);
- ``flow``         the typestate flow (:mod:`.flow`), computed on first use, read through the
                   named queries of :mod:`.flow.queries`.
"""

from __future__ import annotations

from typing import Iterable

import libcst as cst

from .. import torch_api as T
from . import names as N
from . import protocol as P
from .syntax import Builder
from .flow import Flow, Observation, State
from .scalers import ScalerTable, owner_class
from .names import dotted_text
from .scopes import Scopes
from .values import Values
from .structure import CallSite, ClassInfo, FunctionInfo, Region

__all__ = ["AmpModel", "Observation", "State", "CallSite", "FunctionInfo", "ClassInfo", "Region", "owner_class"]

_EVENT_METHODS = frozenset({"scale", "unscale_", "step", "update", "backward", "zero_grad"})
#: calls that may read or edit gradients (``p.grad.norm()``, ``torch.norm(g)``): events when
#: the call classifies as a clip
_GRAD_USES = T.GRAD_READ_METHODS | T.GRAD_EDIT_METHODS
_GRAD_USE_FUNCTIONS = T.NORM_FUNCTIONS | T.GRAD_EDIT_FUNCTIONS | T.GRAD_READ_FUNCTIONS
_BACKWARD_METHODS = frozenset({"backward", "manual_backward"})


class AmpModel:
    #: ``[(rows, LibCST's error)]``: statements LibCST rejected, read as ``pass`` (:func:`amplint.cstparse.parse_around_limits`)
    skipped: list = []

    def __init__(self, module: cst.Module, *, scaler_names: Iterable[str] = (), eval_patterns: Iterable[str] = (),
                 link=None, path=None) -> None:
        self.module = module
        #: the project this module belongs to (:class:`amplint.project.ProjectLink`), or None
        self.project = link
        self.path = path
        b = Builder(module, eval_patterns, link.star_names if link is not None else None)
        self.top = b.build()
        for f in b.functions:
            f.owner_model = self
        for c in b.classes:
            c.owner_model = self
        self.imports = b.imports
        self.functions = b.functions
        self.classes = b.classes
        self.calls = b.calls
        self.assignments = b.assignments
        self.refs = b.refs
        self.fallback_imports = b.fallback_imports
        self.regions = b.regions
        self.seqs = b.seqs
        self.tests = b.tests
        self.test_funcs = b.test_funcs
        self.test_loops = b.test_loops
        self.stand_ins = b.stand_ins
        self.arm_calls = b.arm_calls
        self.arms_of = b.arms_of
        self.guarded_calls = b.guarded_calls
        self.value_texts = b.value_texts
        self.blocks = b.blocks
        self.bindings = b.bindings
        self.call_of: dict[cst.CSTNode, CallSite] = {c.node: c for c in b.calls}
        self._parent_call = b.parent_call
        self.scopes = Scopes(self.top, b.functions, b.classes, b.bindings)
        self.scopes.imports = b.imports
        self.scopes.link = link
        self.values = Values(self.scopes, b.imports, self.call_of, b.classes, self.top)
        self.scalers = ScalerTable(b, self.scopes, self.values, tuple(scaler_names))
        self.self_attrs: dict[ClassInfo, set[str]] = {}
        for a in self.assignments:
            cls = owner_class(a.func)
            if cls is None:
                continue
            for t in a.targets:
                if t is not None and t.startswith("self.") and t.count(".") == 1:
                    self.self_attrs.setdefault(cls, set()).add(t[5:])
        self._callees = self.static_callees = self._static_callees()
        self._with_backward = self._functions_with_backward()
        self._events = None
        self._relevant: list[FunctionInfo] | None = None
        for r in self.regions:
            if r.kind in ("eval", "eval_name"):
                r.has_backward = any(self._is_backward(c) for c in r.calls)
        self._flow: Flow | None = None

    # --- flow ------------------------------------------------------------------------

    @property
    def dtypes(self):
        hit = getattr(self, "_dtypes", None)
        if hit is None:
            from .dtypes import Dtypes

            hit = self._dtypes = Dtypes(self)
        return hit

    @property
    def events(self):
        if self._events is None:
            from .events import Events

            self._events = Events(self)
        return self._events

    @property
    def flow(self) -> Flow:
        """This module's own typestate flow: its functions (and the inherited methods its classes
        run) analysed from their entry, following calls into other project modules. Computed
        once per model, so a module's flow is the same whichever file's analysis asks for it."""
        if self._flow is None:
            from .composite import Composite

            comp = Composite(self)
            self._flow = Flow(comp)
            # no scaler of its own: it may still hand one on to a project module that steps it, or
            # run a base class's template method whose hooks its classes take from a mixin that
            # scales (``run_iter`` calling ``self.backward`` of ``AmpMixin``): a virtual root
            if comp.scalers.any() or self._flow.virtual or (
                    self.project is not None and self.relevant_functions() and self.project.calls_scaler_code()):
                self._flow.run()
        return self._flow

    def _flows(self) -> list[Flow]:
        """The flows whose observations this module's findings come from: its own, and, in a
        project, those of the modules that import it (their training code calls this one with
        the scaler's state at the call). Importers are only read when this module has code that
        can take part in the protocol."""
        hit = self._all_flows
        if hit is None:
            hit = [self.flow]
            if self.project is not None and self.callable_relevant():
                hit += [m.flow for m in self.project.importer_models(self) if m is not self]
            self._all_flows = hit
            self.flow_unconverged = frozenset(n for f in hit for n in f.unconverged)
            self._own_obs = [o for f in hit for o in f.observations if getattr(o.func, "owner_model", self) is self]
        return hit

    _all_flows: list | None = None
    flow_unconverged: frozenset = frozenset()

    def observations(self, *kinds: str) -> list[Observation]:
        """The observations of this module's events (made in any calling context)."""
        self._flows()
        return [o for o in self._own_obs if o.kind in kinds]

    def all_observations(self, *kinds: str) -> list[Observation]:
        """Every observation of the flows, other modules' events included: for findings at a node
        of this module that another module's event reveals (an unscaled backward here whose
        gradients a scaler steps there)."""
        return [o for f in self._flows() for o in f.observations if o.kind in kinds]

    def has_external_callers(self, func) -> bool:
        """Some importing module calls ``func`` (its state at entry is then the caller's, seen
        in that module's flow, not one implied by its own protocol)."""
        return bool(self.project is not None and self.callable_relevant() and self.external_calls(func))

    def owns(self, node) -> bool:
        return node in self.call_of

    def owner_of(self, node):
        """The model (this one or a project module one of its flows reached) whose tree holds
        the call ``node``; None when none does."""
        if self.owns(node):
            return self
        return next((m for f in self._flows() for m in f.m.models if m.owns(node)), None)

    def span(self, node) -> tuple[tuple[int, int], tuple[int, int]] | None:
        """1-based ``((row, column), (end_row, end_column))`` of a node of this model's tree."""
        pos = self._spans
        if pos is None:
            from libcst.metadata import MetadataWrapper, PositionProvider

            pos = self._spans = {
                n: ((r.start.line, r.start.column + 1), (r.end.line, r.end.column + 1))
                for n, r in MetadataWrapper(self.module, unsafe_skip_copy=True).resolve(PositionProvider).items()
            }
        return pos.get(node)

    _spans: dict | None = None

    def callers_passing(self, func, param: str):
        """``(call site, argument expression)`` for each call of ``func`` in this file that passes
        its parameter ``param``."""
        try:
            index = func.params.index(param)
        except ValueError:
            return
        for c in self.calls:
            if self.callee_of(c) is not func:
                continue
            arg = c.argument_for(param, index, bound=(c.text or "").startswith(("self.", "cls.")) and func.cls is not None)
            if arg is not None:
                yield c, arg.value

    def external_calls(self, func) -> list:
        """``(importer model, call site)`` for calls of this module's ``func`` from the project
        modules that import it (resolved through their imports)."""
        if self.project is None:
            return []
        index = self._external
        if index is None:
            index = self._external = {}
            for im in self.project.importer_models(self):
                if im is self or im.project is None:
                    continue
                for c in im.calls:
                    if c.text is None or c.in_lambda:
                        continue
                    qual = im.imports.resolve(c.text)
                    hit = im.project.symbol(qual) if qual is not None else None
                    if hit is not None:
                        index.setdefault(id(hit[1]), []).append((im, c))
        return index.get(id(func), [])

    _external: dict | None = None

    @property
    def relevant_set(self) -> set[FunctionInfo]:
        hit = getattr(self, "_relevant_set", None)
        if hit is None:
            hit = self._relevant_set = set(self.relevant_functions())
        return hit

    def relevant_functions(self) -> list[FunctionInfo]:
        if self._relevant is None:
            self._relevant = self._relevant_functions()
        return self._relevant

    def callable_relevant(self) -> bool:
        """Some function of this module other than its module code takes part in the protocol:
        only those can run in an importer's training code (the module code runs on import, with
        no scaler of the importer's), so only then do importers' flows show anything here."""
        return any(f is not self.top for f in self.relevant_functions())

    def driven_from_outside(self) -> bool:
        """A method of this module steps a scaler outside any loop and no code of the module calls
        it: how often it runs (and what runs between two calls) is decided by its importers
        (``learner.update(batch)`` in an actor loop of another module)."""
        hit = getattr(self, "_driven", None)
        if hit is None:
            called = set().union(*self.static_callees.values()) if self.static_callees else set()
            hit = self._driven = any(
                not c.loops and c.func.cls is not None and c.func not in called and (
                    c.method == "step" and self.is_scaler(c.func, c.recv)
                    # (or hands its scaler to a helper of another module that may step it:
                    # ``with amp_step(self.scaler, self.opt_g): ...``)
                    or c.method is None and any(self.is_scaler(c.func, dotted_text(a.value)) for a in c.node.args
                                                if dotted_text(a.value) is not None)
                    and (self.target_of(c) or (self,))[0] is not self)
                for c in self.calls)
        return hit

    def local_relevant(self) -> frozenset:
        """The functions of this module that take part in the protocol by their own code and the
        calls of it they make (no other module consulted)."""
        hit = self._local_relevant
        if hit is None:
            direct = set()
            for f in self.functions:
                for c in f.calls:
                    if (c.method in _EVENT_METHODS and c.may_be_scaler_method() or c.qual in N.CLIP_FUNCTIONS
                            or self.scalers.is_ctor_call(c.node)
                            # (a hook that reads the gradients: it runs in an importer's protocol)
                            or (c.method in _GRAD_USES or c.qual in _GRAD_USE_FUNCTIONS)
                            and self.events.of(c).kind == "clip"):
                        direct.add(f)
                        break
            self._close_relevant(direct)
            hit = self._local_relevant = frozenset(direct)
        return hit

    _local_relevant: frozenset | None = None

    def _relevant_functions(self) -> list[FunctionInfo]:
        relevant = set(self.local_relevant())
        if self.project is not None:
            # a function that builds or calls protocol code of another project module
            # (``learner = Learner(model)`` of ``impala/learner.py``): the protocol runs in its
            # calls; one hop, read from that module's own relevance
            grew = False
            memo: dict[str, bool] = {}
            for f in self.functions:
                if f in relevant:
                    continue
                for c in f.calls:
                    if c.text is None or c.text.partition(".")[0] not in self.imports.names:
                        continue
                    qual = self.imports.resolve(c.text)
                    hit = memo.get(qual)
                    if hit is None:
                        hit = memo[qual] = _project_protocol(self.project.symbol(qual))
                    if hit:
                        relevant.add(f)
                        grew = True
                        break
            # a subclass of another module's protocol class: the methods that override one of
            # its relevant methods (``train_step`` calling ``super().train_step()``, whose hooks
            # dispatch on the subclass)
            for cls in self.classes:
                inherited = _inherited_protocol(self, cls)
                for name, m in cls.methods.items() if inherited else ():
                    if name in inherited and m not in relevant:
                        relevant.add(m)
                        grew = True
            if grew:
                self._close_relevant(relevant)
        return [f for f in self.functions if f in relevant]

    def _close_relevant(self, relevant: set) -> None:
        changed = True
        while changed:
            changed = False
            for f, callees in self._callees.items():
                if f not in relevant and callees & relevant:
                    relevant.add(f)
                    changed = True

    # --- protocol facts (:mod:`.protocol`) -------------------------------------------------

    def is_scaler_call(self, node) -> bool:
        return P.is_scaler_call(self, node)

    def is_scaled_backward(self, node) -> bool:
        return P.is_scaled_backward(self, node)

    def tensor_backward(self, site) -> bool:
        return P.tensor_backward(self, site)

    def sometimes_scaled(self, site) -> bool:
        return P.sometimes_scaled(self, site)

    def disabled_scalers(self) -> set[str]:
        return P.disabled_scalers(self)

    def guards_stage(self, func) -> bool:
        memo = self.__dict__.setdefault("_guards_stage", {})
        hit = memo.get(func)
        if hit is None:
            hit = memo[func] = P.guards_stage(self, func)
        return hit

    def optimizer_steps_through(self, site, key: str) -> bool:
        return P.optimizer_steps_through(self, site, key)

    def grad_owners(self, site) -> set[str]:
        return P.grad_owners(self, site)

    # --- helpers for rules -----------------------------------------------------------

    def literal_keyword(self, site, name: str):
        """The literal value of keyword argument ``name`` of a call, else NOT_LITERAL."""
        from .syntax import NOT_LITERAL, literal_value

        a = site.keyword(name)
        return literal_value(a.value) if a is not None else NOT_LITERAL

    def code_for(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node)

    def is_simple_statement(self, stmt: cst.CSTNode, node: cst.CSTNode) -> bool:
        """``stmt`` is a line holding only the expression statement ``node``."""
        return (
            isinstance(stmt, cst.SimpleStatementLine)
            and len(stmt.body) == 1
            and isinstance(stmt.body[0], cst.Expr)
            and stmt.body[0].value is node
        )

    def parent_call_of(self, node: cst.CSTNode) -> CallSite | None:
        """The call that has ``node`` as its receiver or as one of its arguments."""
        parent = self._parent_call.get(node)
        return self.call_of.get(parent) if parent is not None else None

    def value_dropped(self, site: CallSite) -> bool:
        """The call is part of a line of bare expression statements: whatever it returns is only
        passed on to other calls (``print(f"{scaler.get_scale()}")``, ``wandb.log({...})``),
        never bound or tested."""
        stmt = site.stmt
        return isinstance(stmt, cst.SimpleStatementLine) and all(isinstance(b, cst.Expr) for b in stmt.body)

    def is_line(self, stmt: cst.CSTNode) -> bool:
        """A simple statement line (edits may be inserted before or after it)."""
        return isinstance(stmt, cst.SimpleStatementLine)

    def is_scaler(self, func: FunctionInfo, key: str | None) -> bool:
        return self.scalers.is_scaler(func, key)

    def callee_of(self, site: CallSite) -> FunctionInfo | None:
        """A function or method of this file a call site statically resolves to."""
        return _resolve_static(self, site)

    def target_of(self, site: CallSite) -> tuple | None:
        """``(model, function)`` a call runs, looking further than :meth:`callee_of`: a function
        of another project module named through this module's imports, a method of an object
        of a known class (``engine.fit(...)``, ``Engine(cfg).fit(...)``: its class's method;
        ``hook(x)``: its ``__call__``), a class's static method. None when unknown."""
        callee = self.callee_of(site)
        if callee is not None:
            return self, callee
        f = site.node.func
        cls, method = None, None
        if isinstance(f, cst.Attribute) and isinstance(f.value, cst.Call) and isinstance(f.value.func, cst.Name):
            named = self.scopes.classes_named(f.value.func.value)
            cls, method = (named[0] if named else None), f.attr.value
        elif site.text is not None:
            head, _, attr = site.text.rpartition(".")
            for key, name in ((site.text, "__call__"), (head, attr)):
                if key and "." not in key:
                    cls = next((c for b in self.scopes.lookup(site.func, key) for c in self._built(b)), None)
                    if cls is not None:
                        method = name
                        break
            if cls is None and "." not in site.text and not _shadowed(site.func, site.text):
                # ``Runner(cfg, model)``: the class's ``__init__`` (of this module or another)
                named = self.scopes.classes_named(site.text)
                cls, method = (named[0], "__init__") if named else (None, None)
            if cls is None and self.project is not None:
                qual = self.imports.resolve(site.text)
                hit = self.project.symbol(qual) if qual is not None and "." in qual else None
                if hit is not None and not hasattr(hit[1], "methods"):
                    return hit
        target = self.scopes.method(cls, method) if cls is not None else None
        return (getattr(target, "owner_model", None) or self, target) if target is not None else None

    def checkpoint_savers(self) -> list[FunctionInfo]:
        """Methods that call ``torch.save`` (a mixin's ``save_checkpoint``: the class that
        inherits it decides whether it trains with a scaler)."""
        return list({c.func: None for c in self.calls if c.qual in N.TORCH_SAVE and c.func.cls is not None})

    def fp16_builders(self) -> list[FunctionInfo]:
        """Functions that convert a module to float16 and return it (a model builder)."""
        from .modules import builders

        return builders(self)

    def _built(self, b) -> list:
        """The class a binding constructs (``engine = Engine(cfg)``), as a one-item list."""
        v = b.value
        if b.kind != "assign" or not isinstance(v, cst.Call) or not isinstance(v.func, cst.Name):
            return []
        return self.scopes.classes_named(v.func.value)[:1]

    def has_backward(self, func: FunctionInfo) -> bool:
        return func in self._with_backward

    def has_backward_call(self, c: CallSite) -> bool:
        """The call is a backward, or a call of a function of this file that runs one."""
        return self._is_backward(c)

    def _is_backward(self, c: CallSite) -> bool:
        if c.method in _BACKWARD_METHODS or c.qual in N.AUTOGRAD_BACKWARD:
            return True
        callee = _resolve_static(self, c)
        return callee is not None and callee in self._with_backward

    @property
    def module_name(self) -> str | None:
        """This module's dotted name in its project (None outside a project)."""
        if self.project is None or self.path is None:
            return None
        return self.project.project.module_name(self.path)

    def _static_callees(self) -> dict[FunctionInfo, set[FunctionInfo]]:
        """What each function calls of this file: functions and methods by name (:func:`_resolve_static`),
        and a class's methods through its constructor (``Learner(model)`` runs ``__init__``) and
        through a local holding one of its instances (``learner = Learner(m); learner.learn(b)``,
        ``loss_scaler(loss, opt)``: its ``__call__``)."""
        by_name = {k.name: k for k in self.classes if k.parent is None}
        instances = _local_instances(self, by_name) if by_name else {}
        out: dict[FunctionInfo, set[FunctionInfo]] = {}
        for f in self.functions:
            s = set()
            for c in f.calls:
                callee = _resolve_static(self, c)
                if callee is None and by_name and c.text is not None:
                    head, _, attr = c.text.rpartition(".")
                    if not head and c.text in by_name and not _shadowed(f, c.text):
                        callee = _method_of(by_name, by_name[c.text], "__init__")
                    elif not head and (f, c.text) in instances:  # ``loss_scaler(loss, opt)``: its ``__call__``
                        callee = _method_of(by_name, instances[f, c.text], "__call__")
                    elif head and "." not in head and (f, head) in instances:
                        callee = _method_of(by_name, instances[f, head], attr)
                if callee is not None:
                    s.add(callee)
            out[f] = s
        return out

    def _functions_with_backward(self) -> set[FunctionInfo]:
        found = {f for f in self.functions if any(c.method in _BACKWARD_METHODS or c.qual in N.AUTOGRAD_BACKWARD for c in f.calls)}
        changed = True
        while changed:
            changed = False
            for f, callees in self._callees.items():
                # a closure defined in ``f`` runs as part of it (``scaler.step(opt, closure)``,
                # ``checkpoint(run_backward)``): its backward is ``f``'s
                if f not in found and (callees & found or any(d in found for d in f.local_defs.values())):
                    found.add(f)
                    changed = True
        return found


def _project_protocol(hit) -> bool:
    """A project symbol (``(model, FunctionInfo | ClassInfo)``) whose module's own code makes it
    take part in the protocol: a relevant function, or a class with a relevant method."""
    if hit is None:
        return False
    model, obj = hit
    local = model.local_relevant()
    if isinstance(obj, FunctionInfo):
        return obj in local
    return any(m in local for m in getattr(obj, "methods", {}).values())


def _inherited_protocol(model: AmpModel, cls) -> set[str]:
    """Names of the methods that take part in the protocol in the bases of ``cls`` that live in
    other project modules (through their own bases too)."""
    out: set[str] = set()
    for b in cls.bases:
        named = model.scopes.classes_named(b)
        base = named[0] if named else None
        owner = getattr(base, "owner_model", None)
        if base is None or owner is None or owner is model:
            continue
        for k in owner.scopes.mro(base):
            local = (getattr(k, "owner_model", None) or owner).local_relevant()
            out.update(n for n, m in k.methods.items() if m in local)
    return out


def _method_of(by_name: dict, cls, attr: str) -> FunctionInfo | None:
    """``attr`` of a class of this file, looked up through its bases of this file (by name)."""
    seen = set()
    while cls is not None and id(cls) not in seen:
        seen.add(id(cls))
        m = cls.methods.get(attr)
        if m is not None:
            return m
        cls = next((by_name[b] for b in cls.bases if b in by_name), None)
    return None


def _shadowed(func: FunctionInfo | None, name: str) -> bool:
    """A local definition or parameter of ``name`` hides the module-level class."""
    f = func
    while f is not None and f.parent is not None:
        if name in f.local_defs or name in f.params:
            return True
        f = f.parent
    return False


def _local_instances(model: AmpModel, by_name: dict) -> dict:
    """``(function, local name) -> class``: a plain name every assignment of which, in that
    function, builds an instance of the same module-level class of this file."""
    seen: dict = {}
    for b in model.bindings:
        if b.func is None or "." in b.name or b.kind in ("import", "def", "class", "item", "del"):
            continue
        key = (b.func, b.name)
        cls = None
        v = b.value
        if b.kind in ("assign", "ann", "walrus") and not b.unpack and isinstance(v, cst.Call) \
                and isinstance(v.func, cst.Name) and v.func.value in by_name and not _shadowed(b.func, v.func.value):
            cls = by_name[v.func.value]
        if cls is None or seen.get(key, cls) is not cls:
            seen[key] = False
        else:
            seen[key] = cls
    return {k: v for k, v in seen.items() if v is not False}


def _resolve_static(model: AmpModel, c: CallSite) -> FunctionInfo | None:
    text = c.text
    if text is None:
        return None
    if "." not in text:
        f: FunctionInfo | None = c.func
        while f is not None:
            d = f.local_defs.get(text)
            if d is not None:
                return d
            f = f.parent
        return None
    head, _, attr = text.rpartition(".")
    if head in ("self", "cls"):
        return _method_of({k.name: k for k in model.classes}, owner_class(c.func), attr)
    return None
