"""Which names hold a GradScaler.

A name (or ``self.<attr>``, or a dotted chain such as ``trainer.scaler``) is a scaler when:

- it is bound to a GradScaler constructor (``torch.amp.GradScaler``, the deprecated and
  sharded spellings, any imported ``*GradScaler``, or a class of this file deriving from one),
  also as one arm of ``GradScaler(...) if amp else None``;
- it is ``self.<attr>`` and some method of the class (or an in-file base class) binds it so;
- it is a parameter annotated with a GradScaler type (``Optional[GradScaler]`` too);
- it is bound to another scaler (``scaler = self.scaler``);
- its use proves it: ``X.scale(loss).backward()``, ``X.unscale_(opt)``, or the GradScaler
  methods called on a receiver whose name says it is a scaler (``grad_scaler.step(opt)``);
- the user configured its name (``scaler-names``).

A name bound to any other constructor (sklearn's ``StandardScaler()``, a dataclass) is not
a scaler, whatever methods are called on it.
"""

from __future__ import annotations

import libcst as cst

from . import names as N
from .build import expr_key
from .structure import Assignment, CallSite, ClassInfo, FunctionInfo

SCALER_METHODS = frozenset({"scale", "unscale_", "step", "update"})


class ScalerTable:
    def __init__(self, builder, extra_names: tuple[str, ...] = ()) -> None:
        self.b = builder
        self.extra = tuple(extra_names)
        self.classes_by_name = {c.name: c for c in builder.classes}
        self.scaler_classes = self._scaler_classes()
        self.ctor_sites: list[CallSite] = [c for c in builder.calls if self.is_ctor_call(c.node)]
        self.module_keys: set[str] = set()
        self.class_attrs: dict[ClassInfo, set[str]] = {}
        self.local_keys: dict[FunctionInfo, set[str]] = {}
        self.negative_module: set[str] = set()
        self.negative_class: dict[ClassInfo, set[str]] = {}
        self.negative_local: dict[FunctionInfo, set[str]] = {}
        self.aliases: dict[FunctionInfo, dict[str, str]] = {}
        self._compute()

    # --- constructor recognition ---------------------------------------------------

    def _scaler_classes(self) -> set[str]:
        out: set[str] = set()
        changed = True
        while changed:
            changed = False
            for c in self.b.classes:
                if c.name in out:
                    continue
                for text, qual in zip(c.bases, c.base_quals):
                    if N.is_grad_scaler_ctor(qual) or N.is_grad_scaler_ctor(text) or text in out:
                        out.add(c.name)
                        changed = True
                        break
        return out

    def is_ctor_call(self, node: cst.CSTNode) -> bool:
        if not isinstance(node, cst.Call):
            return False
        text = _dotted(node.func)
        if text is None:
            return False
        qual = self.b.imports.resolve(text)
        if qual is not None:
            return N.is_grad_scaler_ctor(qual)
        return text in self.scaler_classes or N.is_grad_scaler_ctor(text)

    def ctor_in(self, value: cst.BaseExpression | None) -> cst.Call | None:
        """The GradScaler constructor call a bound value is (or one arm of it is)."""
        if value is None:
            return None
        if self.is_ctor_call(value):
            return value  # type: ignore[return-value]
        if isinstance(value, cst.IfExp):
            return self.ctor_in(value.body) or self.ctor_in(value.orelse)
        if isinstance(value, cst.BooleanOperation):
            return self.ctor_in(value.left) or self.ctor_in(value.right)
        return None

    # --- scopes --------------------------------------------------------------------

    def scope_of(self, func: FunctionInfo, key: str) -> tuple[str, object]:
        head = key.split(".", 1)[0].split("[", 1)[0]
        owner = owner_class(func)
        if head == "self" and owner is not None and "." in key:
            return ("class", owner)
        if func.is_local(head):
            return ("local", func)
        return ("module", None)

    def _add(self, func: FunctionInfo, key: str, negative: bool = False) -> None:
        kind, scope = self.scope_of(func, key)
        if kind == "class":
            table = self.negative_class if negative else self.class_attrs
            table.setdefault(scope, set()).add(key)  # type: ignore[arg-type]
        elif kind == "local":
            table = self.negative_local if negative else self.local_keys
            table.setdefault(scope, set()).add(key)  # type: ignore[arg-type]
        else:
            (self.negative_module if negative else self.module_keys).add(key)

    # --- the computation -----------------------------------------------------------

    def _compute(self) -> None:
        b = self.b
        # 1. constructor bindings, and negative evidence (bound to some other call)
        for a in b.assignments:
            ctor = self.ctor_in(a.value)
            for t in a.targets:
                if t is None:
                    continue
                if ctor is not None:
                    self._add(a.func, t)
                elif _is_other_object(a.value):
                    self._add(a.func, t, negative=True)
        # 2. annotated parameters
        for f in b.functions:
            for p, ann in f.param_annotations.items():
                if ann is not None and (N.is_grad_scaler_ctor(ann) or ann in self.scaler_classes):
                    self.local_keys.setdefault(f, set()).add(p)
        # 3. evidence by use
        for f in b.functions:
            for key in self._used_as_scaler(f):
                self._add(f, key)
        # 4. configured names
        if self.extra:
            for f in b.functions:
                for c in f.calls:
                    if c.recv is not None and c.method in SCALER_METHODS and self._configured(c.recv):
                        self._add(f, c.recv)
        # 5. aliases (``scaler = self.scaler``), to a fixpoint
        for _ in range(3):
            changed = False
            for a in b.assignments:
                src = _alias_source(a)
                if src is None or not self.is_scaler(a.func, src):
                    continue
                for t in a.targets:
                    if t is not None and t != src and not self.is_scaler(a.func, t):
                        self._add(a.func, t)
                        changed = True
                    if t is not None and t != src and "." not in t:
                        self.aliases.setdefault(a.func, {})[t] = src
            if not changed:
                break

    def _configured(self, key: str) -> bool:
        last = key.rsplit(".", 1)[-1]
        return key in self.extra or last in self.extra

    def _used_as_scaler(self, f: FunctionInfo) -> set[str]:
        """Receivers of ``f`` whose use proves a GradScaler."""
        out: set[str] = set()
        scaled_names: dict[str, str] = {}
        by_recv: dict[str, set[str]] = {}
        for a in self.b.assignments:
            if a.func is f and isinstance(a.value, cst.Call):
                fn = a.value.func
                if isinstance(fn, cst.Attribute) and fn.attr.value == "scale":
                    recv = expr_key(fn.value)
                    if recv is not None:
                        for t in a.targets:
                            if t is not None:
                                scaled_names[t] = recv
        for c in f.calls:
            if c.method is None:
                continue
            if c.recv is not None and c.method in SCALER_METHODS:
                by_recv.setdefault(c.recv, set()).add(c.method)
            if c.method == "unscale_" and c.recv is not None:
                out.add(c.recv)
            elif c.method == "backward":
                inner = c.recv_node
                if isinstance(inner, cst.Call) and isinstance(inner.func, cst.Attribute) and inner.func.attr.value == "scale":
                    recv = expr_key(inner.func.value)
                    if recv is not None:
                        out.add(recv)
                elif c.recv in scaled_names:
                    out.add(scaled_names[c.recv])
        for recv, methods in by_recv.items():
            if "scaler" in recv.rsplit(".", 1)[-1].lower() and methods & SCALER_METHODS:
                out.add(recv)
        return out

    # --- queries -------------------------------------------------------------------

    def is_scaler(self, func: FunctionInfo, key: str | None) -> bool:
        if key is None:
            return False
        kind, scope = self.scope_of(func, key)
        if kind == "local":
            if key in self.local_keys.get(func, ()):  # type: ignore[arg-type]
                return True
            return False
        if kind == "class":
            cls = scope
            while cls is not None:
                if key in self.class_attrs.get(cls, ()):  # type: ignore[arg-type]
                    return True
                cls = self._base(cls)  # type: ignore[arg-type]
            if self.extra and self._configured(key):
                return True
            return False
        if key in self.module_keys:
            return True
        if self.extra and self._configured(key):
            return True
        return False

    def is_negative(self, func: FunctionInfo, key: str) -> bool:
        kind, scope = self.scope_of(func, key)
        if kind == "local":
            return key in self.negative_local.get(func, ())  # type: ignore[arg-type]
        if kind == "class":
            return key in self.negative_class.get(scope, ())  # type: ignore[arg-type]
        return key in self.negative_module

    def _base(self, cls: ClassInfo) -> ClassInfo | None:
        for text in cls.bases:
            base = self.classes_by_name.get(text)
            if base is not None and base is not cls:
                return base
        return None

    def finalize(self) -> None:
        """Drop keys with negative evidence and no constructor binding."""
        for f, keys in list(self.local_keys.items()):
            neg = self.negative_local.get(f, set())
            ctor_bound = self._ctor_bound(f)
            self.local_keys[f] = {k for k in keys if k not in neg or k in ctor_bound}
        self.module_keys = {k for k in self.module_keys if k not in self.negative_module or k in self._ctor_bound(None)}
        for c, keys in list(self.class_attrs.items()):
            neg = self.negative_class.get(c, set())
            bound = self._ctor_bound_class(c)
            self.class_attrs[c] = {k for k in keys if k not in neg or k in bound}

    def _ctor_bound(self, f: FunctionInfo | None) -> set[str]:
        out = set()
        for a in self.b.assignments:
            if (f is None and a.func.is_module or a.func is f) and self.ctor_in(a.value) is not None:
                out.update(t for t in a.targets if t is not None)
        return out

    def _ctor_bound_class(self, c: ClassInfo) -> set[str]:
        out = set()
        for a in self.b.assignments:
            if owner_class(a.func) is c and self.ctor_in(a.value) is not None:
                out.update(t for t in a.targets if t is not None)
        return out

    def escapes(self, key: str) -> bool:
        """``key`` is read as a value somewhere (passed, returned, aliased), or, for
        ``self.<attr>``, the owning object itself is handed to other code."""
        for f, texts in self.b.value_texts.items():
            if key in texts:
                return True
            if key.startswith("self.") and "self" in texts and owner_class(f) is not None:
                return True
        return False

    def owned(self, func: FunctionInfo, key: str) -> bool:
        """``key`` holds a scaler its scope made itself: every binding of it (in the function,
        the class for ``self.<attr>``, or the module) is a GradScaler constructor or None."""
        kind, scope = self.scope_of(func, key)
        found = False
        for a in self.b.assignments:
            if key not in a.targets:
                continue
            if kind == "local" and a.func is not scope:
                continue
            if kind == "class" and owner_class(a.func) is not scope:
                continue
            if kind == "module" and not a.func.is_module and a.func.is_local(key.split(".", 1)[0]):
                continue
            if self.ctor_in(a.value) is not None:
                found = True
            elif not (isinstance(a.value, cst.Name) and a.value.value == "None"):
                return False
        return found

    def any(self) -> bool:
        return bool(self.module_keys or any(self.local_keys.values()) or any(self.class_attrs.values()) or self.ctor_sites or self.extra)


def owner_class(func: FunctionInfo) -> ClassInfo | None:
    f: FunctionInfo | None = func
    while f is not None:
        if f.cls is not None:
            return f.cls
        f = f.parent
    return None


def _dotted(node: cst.BaseExpression) -> str | None:
    from .names import dotted_text

    return dotted_text(node)


def _alias_source(a: Assignment) -> str | None:
    v = a.value
    if isinstance(v, (cst.Name, cst.Attribute)):
        return expr_key(v)
    if isinstance(v, cst.IfExp):
        for arm in (v.body, v.orelse):
            if isinstance(arm, (cst.Name, cst.Attribute)) and not (isinstance(arm, cst.Name) and arm.value == "None"):
                return expr_key(arm)
    return None


def _is_other_object(value: cst.BaseExpression | None) -> bool:
    """A binding that cannot be a GradScaler: another class's constructor, or a literal.

    Factory functions (``scaler = build_scaler(cfg)``) are no evidence either way.
    """
    if isinstance(value, cst.Call):
        text = _dotted(value.func)
        last = text.rsplit(".", 1)[-1] if text else ""
        return last[:1].isupper()
    if isinstance(value, (cst.Integer, cst.Float, cst.SimpleString, cst.List, cst.Dict, cst.Tuple, cst.Lambda)):
        return True
    return False
