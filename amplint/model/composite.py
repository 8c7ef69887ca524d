"""Several modules' models seen as one by the flow (project-wide analysis).

The interpreter reads per-file facts by node or by function (statement sequences, call sites,
bindings, events, scaler verdicts, scopes). A :class:`Composite` merges those of the models it
holds, and dispatches the questions that need a module's own names (which names hold a scaler,
how a call resolves) to the model that defines the function asked about. Models of other
project modules join it when the flow first reaches a call into them (:meth:`Composite.add`).
"""

from __future__ import annotations


def owner(func):
    return getattr(func, "owner_model", None)


class _Scalers:
    def __init__(self, comp: "Composite") -> None:
        self.c = comp

    def _of(self, func):
        m = owner(func)
        return (m if m is not None else self.c.primary).scalers

    def is_scaler(self, func, key):
        return self._of(func).is_scaler(func, key)

    def ctor_in(self, value):
        for m in self.c.models:
            hit = m.scalers.ctor_in(value)
            if hit is not None:
                return hit
        return None

    def is_ctor_call(self, node):
        return any(m.scalers.is_ctor_call(node) for m in self.c.models)

    @property
    def aliases(self):
        out: dict = {}
        for m in self.c.models:
            out.update(m.scalers.aliases)
        return out

    @property
    def extra(self):
        return self.c.primary.scalers.extra

    @property
    def scopes(self):
        return self.c.scopes

    def _tables(self):
        module: set = set()
        classes: dict = {}
        local: dict = {}
        for m in self.c.models:
            a, b, c = m.scalers._tables()
            module |= a
            classes.update(b)
            local.update(c)
        return module, classes, local

    def any(self) -> bool:
        return any(m.scalers.any() for m in self.c.models)


class _Scopes:
    def __init__(self, comp: "Composite") -> None:
        self.c = comp

    def _of(self, func):
        m = owner(func)
        return (m if m is not None else self.c.primary).scopes

    def scope_of(self, func, name):
        return self._of(func).scope_of(func, name)

    def lookup(self, func, name):
        return self._of(func).lookup(func, name)

    def local(self, func, name):
        return self._of(func).local(func, name)

    def mro(self, cls):
        return self._of(cls).mro(cls)

    def method(self, cls, name):
        return self._of(cls).method(cls, name)

    def base_classes(self, cls):
        return self._of(cls).base_classes(cls)

    def attr(self, cls, attr):
        return self._of(cls).attr(cls, attr)

    def classes_named(self, name, ctx=None):
        """What ``name`` means as a class in the module of ``ctx`` (a function or a class)."""
        scopes = self._of(ctx) if ctx is not None else self.c.primary.scopes
        return scopes.classes_named(name)


class _Values:
    def __init__(self, comp: "Composite") -> None:
        self.c = comp

    def bindings_of_key(self, func, key):
        m = owner(func) or self.c.primary
        return m.values.bindings_of_key(func, key)

    def of(self, func, expr, depth=0):
        m = owner(func) or self.c.primary
        return m.values.of(func, expr, depth)


class _Events:
    def __init__(self, comp: "Composite") -> None:
        self.c = comp

    def of(self, site):
        m = owner(site.func) or self.c.primary
        return m.events.of(site)

    @property
    def opt_texts(self):
        out: set = set()
        for m in self.c.models:
            out |= m.events.opt_texts
        return out


_MERGED_DICTS = ("seqs", "call_of", "test_funcs", "test_loops", "stand_ins", "guarded_calls", "arm_calls", "arms_of", "self_attrs", "value_texts",
                 "blocks", "static_callees")
_MERGED_LISTS = ("bindings", "assignments", "calls", "functions", "classes", "tests", "regions")


class Composite:
    def __init__(self, primary, others=()) -> None:
        self.primary = primary
        self.models: list = []
        self.scalers = _Scalers(self)
        self.scopes = _Scopes(self)
        self.values = _Values(self)
        self.events = _Events(self)
        for name in _MERGED_DICTS:
            setattr(self, name, {})
        for name in _MERGED_LISTS:
            setattr(self, name, [])
        self._relevant: list = []
        self._roots: list = []
        self.add(primary, root=True)
        for m in others:
            self.add(m, root=True)

    def add(self, model, root: bool = False) -> None:
        """Let the flow see ``model``'s facts; ``root``: analyse its functions on their own too."""
        if model in self.models:
            if root and model not in self._roots:
                self._roots.append(model)
            return
        self.models.append(model)
        if root:
            self._roots.append(model)
        for name in _MERGED_DICTS:
            getattr(self, name).update(getattr(model, name))
        for name in _MERGED_LISTS:
            getattr(self, name).extend(getattr(model, name))
        self._relevant_set = None

    # --- what the flow asks the model -------------------------------------------------------

    @property
    def top(self):
        return self.primary.top

    def code_for(self, node) -> str:
        return self.primary.code_for(node)

    def relevant_functions(self) -> list:
        out = []
        for m in self._roots:
            out.extend(m.relevant_functions())
        return out

    @property
    def relevant_set(self) -> set:
        if self._relevant_set is None:
            self._relevant_set = {f for m in self.models for f in m.relevant_functions()}
        return self._relevant_set

    def has_backward(self, func) -> bool:
        return (owner(func) or self.primary).has_backward(func)

    def has_backward_call(self, site) -> bool:
        return (owner(site.func) or self.primary).has_backward_call(site)

    def callee_of(self, site):
        return (owner(site.func) or self.primary).callee_of(site)

    def imports_of(self, func):
        return (owner(func) or self.primary).imports

    @property
    def imports(self):
        return self.primary.imports
