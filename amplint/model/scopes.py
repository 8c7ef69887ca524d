"""Scopes and bindings (pyflakes-style): what a name, ``self.<attr>`` or dotted target is bound to.

Built from the bindings the syntax walk records (:class:`~amplint.model.structure.Binding`);
answers, for a name read in a function, which bindings it may refer to under Python's rules
(local, then enclosing functions, then the module; class bodies are not enclosing scopes;
``global``/``nonlocal`` declarations respected), and, for ``self.<attr>``, every binding of that
attribute in the methods and the body of the class and of its bases (the MRO of the classes
this file defines).
"""

from __future__ import annotations

from .structure import Binding, ClassInfo, FunctionInfo


def _scopes_of(cls: ClassInfo, default: "Scopes") -> "Scopes":
    model = getattr(cls, "owner_model", None)
    return model.scopes if model is not None else default


def owner_class(func: FunctionInfo | None) -> ClassInfo | None:
    """The class whose method ``func`` is (or whose method encloses it)."""
    f = func
    while f is not None:
        if f.cls is not None:
            return f.cls
        f = f.parent
    return None


class Scopes:
    def __init__(self, top: FunctionInfo, functions: list[FunctionInfo], classes: list[ClassInfo],
                 bindings: list[Binding]) -> None:
        self.top = top
        self.functions = functions
        self.classes = classes
        self.all = bindings
        self._local: dict[FunctionInfo, dict[str, list[Binding]]] = {}
        self._class_body: dict[ClassInfo, dict[str, list[Binding]]] = {}
        self._self_attrs: dict[ClassInfo, dict[str, list[Binding]]] = {}
        self._items: dict[tuple[FunctionInfo, str], list[Binding]] = {}
        self.by_name: dict[str, list[ClassInfo]] = {}
        for c in classes:
            self.by_name.setdefault(c.name, []).append(c)
        for b in bindings:
            if b.kind == "item":
                self._items.setdefault((b.func, b.name), []).append(b)
                continue
            if b.cls is not None:
                self._class_body.setdefault(b.cls, {}).setdefault(b.name, []).append(b)
                continue
            head, dot, attr = b.name.partition(".")
            if dot and head in ("self", "cls") and "." not in attr:
                cls = owner_class(b.func)
                if cls is not None:
                    self._self_attrs.setdefault(cls, {}).setdefault(attr, []).append(b)
                    continue
            self._local.setdefault(b.func, {}).setdefault(b.name, []).append(b)
        self._mro: dict[ClassInfo, tuple[ClassInfo, ...]] = {}

    # --- names -------------------------------------------------------------------------------

    def local(self, func: FunctionInfo, name: str) -> list[Binding]:
        """Bindings of ``name`` made in ``func`` itself (for the module: at module level)."""
        return self._local.get(func, {}).get(name, [])

    def locals_of(self, func: FunctionInfo) -> dict[str, list[Binding]]:
        """Every name bound in ``func`` itself -> its bindings."""
        return self._local.get(func, {})

    def scope_of(self, func: FunctionInfo, name: str) -> FunctionInfo:
        """The function (``top`` for the module) whose scope ``name`` belongs to when read in ``func``."""
        head = name.split(".", 1)[0].split("[", 1)[0]
        if head in func.globals_declared and not func.is_module:
            if head not in func.nonlocals:
                return self.top
            f = func.parent
            while f is not None and not f.is_module and head not in self._local.get(f, {}) and head not in f.params:
                f = f.parent
            return f if f is not None else self.top
        f: FunctionInfo | None = func
        while f is not None:
            if f.is_module:
                return f
            if head in f.params or head in self._local.get(f, {}):
                return f
            f = f.parent
        return self.top

    def lookup(self, func: FunctionInfo, name: str) -> list[Binding]:
        """The bindings ``name`` (or a dotted target such as ``args.amp``) may refer to in ``func``."""
        return self.local(self.scope_of(func, name), name)

    def items(self, func: FunctionInfo, name: str) -> list[Binding]:
        """``name[key] = value`` bindings of the container ``name`` in its scope."""
        return self._items.get((self.scope_of(func, name), name), [])

    # --- classes -----------------------------------------------------------------------------

    #: set by the model when the file is part of a project: resolves imported names to the
    #: functions and classes of other project modules (:class:`amplint.project.ProjectLink`)
    link = None
    imports = None

    def classes_named(self, name: str, gated: bool = True) -> list[ClassInfo]:
        """The class a name (or dotted name) means in this module: one of its own, or, through
        its imports, one of another project module (read even when nothing in it matters to the
        protocol, unless ``gated``: a dataclass of settings whose field defaults a rule reads)."""
        if "." not in name:
            hit = self.by_name.get(name, [])
            if hit or self.link is None:
                return hit
        if self.link is None or self.imports is None:
            return []
        qual = self.imports.resolve(name)
        found = self.link.symbol(qual, gated=gated) if qual is not None else None
        return [found[1]] if found is not None and hasattr(found[1], "methods") else []

    def base_classes(self, cls: ClassInfo) -> list[ClassInfo]:
        scopes = _scopes_of(cls, self)
        out = []
        for text in cls.bases:
            for base in scopes.classes_named(text):
                if base is not cls:
                    out.append(base)
                    break
        return out

    def mro(self, cls: ClassInfo) -> tuple[ClassInfo, ...]:
        """``cls`` and its bases defined in this file or (in a project) in other modules, depth
        first, left to right, each once."""
        hit = self._mro.get(cls)
        if hit is None:
            out: list[ClassInfo] = []
            todo = [cls]
            while todo:
                c = todo.pop(0)
                if c in out:
                    continue
                out.append(c)
                todo[0:0] = _scopes_of(c, self).base_classes(c)
            hit = self._mro[cls] = tuple(out)
        return hit

    def attr(self, cls: ClassInfo, attr: str) -> list[Binding]:
        """Bindings of ``self.<attr>`` in the methods of ``cls`` and its bases, and of ``attr``
        in their class bodies (class attributes, dataclass fields, methods, properties)."""
        out: list[Binding] = []
        for c in self.mro(cls):
            s = _scopes_of(c, self)
            out.extend(s._self_attrs.get(c, {}).get(attr, ()))
            out.extend(s._class_body.get(c, {}).get(attr, ()))
        if not out:
            # a mixin reading an attribute it never binds (``self.scaler`` in a ``ClipGradMixin``):
            # what the classes of this file mixing it in bind
            for sub in self.mixed_into(cls):
                out.extend(self.attr(sub, attr))
        return out

    def mixed_into(self, cls: ClassInfo) -> list[ClassInfo]:
        """The classes of this file with ``cls`` among their bases (directly or further up)."""
        memo = self.__dict__.setdefault("_mixed_memo", {})
        hit = memo.get(cls)
        if hit is None:
            hit = memo[cls] = [c for group in self.by_name.values() for c in group
                               if c is not cls and cls in self.mro(c)[1:]]
        return hit

    def self_attr_names(self, cls: ClassInfo) -> set[str]:
        return set(self._self_attrs.get(cls, {}))

    def method(self, cls: ClassInfo | None, name: str) -> FunctionInfo | None:
        if cls is None:
            return None
        for c in self.mro(cls):
            m = c.methods.get(name)
            if m is not None:
                return m
        return None
