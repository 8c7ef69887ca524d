"""Values: what a name or an expression may hold, from its bindings.

``Values.of(func, expr)`` is the set of :class:`Value` s an expression read in ``func`` may
evaluate to. It follows bindings (:mod:`.scopes`) through aliases, conditional expressions,
``a or b``, tuple unpacking, loop targets over lists of tuples / ``zip(...)`` / ``enumerate`` /
``.items()`` / ``.values()``, container literals and their constant-key items (``d["k"]``,
``self.optimizers[name]``), ``getattr(obj, "name", default)``, dataclass and NamedTuple fields,
properties, calls of this file's functions (their return values) and of its classes (an
instance), and constructors of torch's own classes. Unknown is explicit (:data:`UNKNOWN`); the
analysis is flow-insensitive (every binding of a name counts) and bounded in depth.

Kinds of value:

- ``scaler``: a GradScaler (``site`` its constructor call, ``spec`` its signature, ``sharded``,
  ``enabled`` True/False/None); from a constructor, an annotation, or another scaler;
- ``other``: an instance of some other class (``qual``: its dotted name), an annotation naming
  another class (``StandardScaler``, a project's ``ActivationScaler``): never a GradScaler;
- ``literal``: a constant (``data``: the Python value; ``None`` included);
- ``optimizer`` (``site``: the constructor, ``data``: the parameters argument), ``fsdp``
  (``data``: 1 or 2), ``device`` (``data``: the device type, or None), ``dtype`` (``data``:
  ``"float16"``/``"bfloat16"``/``"other"``), ``bce`` (an ``nn.BCELoss`` instance), ``scheduler``;
- ``scaled``: the result of ``S.scale(...)`` (``data``: the scaler's expression key);
- ``instance`` / ``class`` / ``function``: this file's classes and functions (``data``);
- ``container``: a list/tuple/dict/set literal (``data``: the literal node);
- ``bool``: a truth value not known statically (a comparison, ``not x``, an annotation ``bool``);
- ``param``: a parameter whose value comes from the caller (``data``: its name);
- ``import``: a module or name bound by an import (``data``: the qualified name);
- ``unknown``.
"""

from __future__ import annotations

import re

import libcst as cst

from .. import torch_api as T
from .names import ImportTable, dotted_text
from .scopes import Scopes, owner_class
from .structure import Binding, CallSite, ClassInfo, FunctionInfo
from .syntax import NOT_LITERAL, expr_key, literal_value


class Value:
    __slots__ = ("kind", "data", "site", "spec", "enabled", "_h")

    def __init__(self, kind: str, data=None, site: CallSite | None = None, spec=None, enabled=None) -> None:
        self.kind = kind
        self.data = data
        self.site = site
        self.spec = spec
        self.enabled = enabled
        self._h = hash((kind, id(data) if isinstance(data, cst.CSTNode) else _hashable(data), id(site)))

    def __hash__(self) -> int:
        return self._h

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Value) or self._h != other._h or self.kind != other.kind or self.site is not other.site:
            return False
        if isinstance(self.data, cst.CSTNode):
            return self.data is other.data
        return self.data == other.data

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"Value({self.kind}, {self.data!r})"

    @property
    def sharded(self) -> bool:
        return self.spec is not None and self.spec.sharded


def _hashable(data):
    try:
        hash(data)
        return data
    except TypeError:
        return id(data)


_AMP_SCALER_NAME = re.compile(r"(?i)(?:grad|amp)_?scaler")
UNKNOWN = Value("unknown")
NONE = Value("literal", None)
_EMPTY: frozenset[Value] = frozenset()
_MAX_DEPTH = 6
#: builtins that return an element of their first argument's iteration (``iter``, ``next``...)
_ELEMENT_OF = frozenset({"next"})
_PASS_THROUGH = frozenset({"iter", "list", "tuple", "sorted", "reversed"})


class Values:
    def __init__(self, scopes: Scopes, imports: ImportTable, call_of: dict, classes: list[ClassInfo],
                 top: FunctionInfo) -> None:
        self.scopes = scopes
        self.imports = imports
        self.call_of = call_of
        self.top = top
        self.classes = {c.name: c for c in classes}
        self._memo: dict[tuple[int, int], frozenset[Value]] = {}
        self._busy: set[tuple[int, int]] = set()
        self._returns: dict[FunctionInfo, list[cst.BaseExpression]] = {}
        self.scaler_classes = self._scaler_classes(classes)

    # --- entry points ------------------------------------------------------------------------

    def of(self, func: FunctionInfo, expr: cst.BaseExpression | None, depth: int = 0) -> frozenset[Value]:
        if expr is None:
            return _EMPTY
        key = (id(expr), id(func))
        hit = self._memo.get(key)
        if hit is not None:
            return hit
        if key in self._busy or depth > _MAX_DEPTH:
            return frozenset({UNKNOWN})
        self._busy.add(key)
        try:
            out = self._of(func, expr, depth + 1)
        finally:
            self._busy.discard(key)
        if depth == 0 or out:
            self._memo[key] = out
        return out

    def of_key(self, func: FunctionInfo, key: str, depth: int = 0) -> frozenset[Value]:
        """Values of a dotted key (``scaler``, ``self.scaler``, ``trainer.scaler``, ``opts[0]``)."""
        if "[" in key:
            return frozenset({UNKNOWN})
        head, dot, rest = key.partition(".")
        if not dot:
            return self._name(func, key, depth)
        if head in ("self", "cls") and "." not in rest:
            cls = owner_class(func)
            if cls is not None:
                return self._attr_of_class(cls, rest, depth)
        direct = self.scopes.lookup(func, key)
        out: set[Value] = set(self._bindings(direct, depth))
        base_key, _, attr = key.rpartition(".")
        for base in self.of_key(func, base_key, depth + 1) if depth < _MAX_DEPTH else ():
            out |= self._attr_of_value(base, attr, depth)
        return frozenset(out) if out else frozenset({UNKNOWN})

    def may_be_none_only(self, func: FunctionInfo, expr: cst.BaseExpression) -> bool:
        """``expr`` is ``None``, or a parameter defaulting to ``None`` that no binding makes
        anything else (``closure=None`` handed on as ``scaler.step(opt, closure)``)."""
        vals = self.of(func, expr)
        return any(v.kind == "literal" and v.data is None for v in vals) and all(
            v.kind == "param" or (v.kind == "literal" and v.data is None) for v in vals)

    def dtype_test(self, func: FunctionInfo, test: cst.BaseExpression) -> bool | None:
        """The truth of ``x is torch.float16`` (``is not``, ``==``, ``!=``, or against ``None``)
        when every value ``x`` may hold is a float16/bfloat16 dtype or ``None`` (``amp_dtype =
        torch.bfloat16 if cfg.amp else None``): a branch that can never be taken. None when
        unknown."""
        if type(test) is not cst.Comparison or len(test.comparisons) != 1:
            return None
        op = test.comparisons[0].operator
        if not isinstance(op, (cst.Is, cst.IsNot, cst.Equal, cst.NotEqual)):
            return None
        right = self._dtype_or_none(func, test.comparisons[0].comparator)
        if right is None:
            return None
        left = set()
        for v in self.of(func, test.left):
            got = self._dtype_or_none(func, None, v)
            if got is None:
                return None
            left.add(got)
        if not left:
            return None
        same = True if left == {right} else (False if right not in left else None)
        if same is None:
            return None
        return same if isinstance(op, (cst.Is, cst.Equal)) else not same

    def _dtype_or_none(self, func, expr, value: Value | None = None) -> str | None:
        """``"float16"``, ``"bfloat16"`` or ``"None"`` for a value (or a one-valued expression)
        of those kinds; None otherwise."""
        if value is None:
            vals = self.of(func, expr)
            if len(vals) != 1:
                return None
            value = next(iter(vals))
        if value.kind == "literal" and value.data is None:
            return "None"
        if value.kind == "dtype" and value.data in ("float16", "bfloat16"):
            return value.data
        return None

    def bindings_of_key(self, func: FunctionInfo, key: str) -> list[Binding]:
        head, dot, rest = key.partition(".")
        if dot and head in ("self", "cls") and "." not in rest:
            cls = owner_class(func)
            if cls is not None:
                return self.scopes.attr(cls, rest)
        return self.scopes.lookup(func, key)

    # --- expressions -------------------------------------------------------------------------

    def _of(self, func: FunctionInfo, e: cst.BaseExpression, depth: int) -> frozenset[Value]:
        t = type(e)
        if t is cst.Name or t is cst.Attribute:
            text = dotted_text(e)
            if text is None:
                if t is cst.Attribute:
                    out = set()
                    for base in self.of(func, e.value, depth):
                        out |= self._attr_of_value(base, e.attr.value, depth)
                    return frozenset(out) or frozenset({UNKNOWN})
                return frozenset({UNKNOWN})
            if text in ("None", "True", "False"):
                return frozenset({Value("literal", {"None": None, "True": True, "False": False}[text])})
            qual = self._qual(func, text)
            if qual is not None:
                k = T.dtype_kind(qual)
                if k is not None:
                    return frozenset({Value("dtype", k)})
            return self.of_key(func, text, depth)
        if t is cst.Call:
            return self._call(func, e, depth)
        if t is cst.IfExp:
            return self.of(func, e.body, depth) | self.of(func, e.orelse, depth)
        if t is cst.BooleanOperation:
            return self.of(func, e.left, depth) | self.of(func, e.right, depth)
        if t is cst.NamedExpr:
            return self.of(func, e.value, depth)
        if t in (cst.List, cst.Tuple, cst.Dict, cst.Set, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp):
            return frozenset({Value("container", e)})
        if t is cst.Subscript:
            return self._subscript(func, e, depth)
        if t is cst.Await:
            return self.of(func, e.expression, depth)
        if t is cst.Comparison or t is cst.UnaryOperation and type(e.operator) is cst.Not:
            return frozenset({Value("bool")})
        v = literal_value(e)
        if v is not NOT_LITERAL:
            return frozenset({Value("literal", v)})
        return frozenset({UNKNOWN})

    def _qual(self, func: FunctionInfo, text: str) -> str | None:
        """The import a dotted text resolves to, unless its head is rebound locally."""
        head = text.split(".", 1)[0]
        scope = self.scopes.scope_of(func, head)
        if not scope.is_module and any(b.kind != "import" for b in self.scopes.local(scope, head)):
            return None
        return self.imports.resolve(text)

    def _name(self, func: FunctionInfo, name: str, depth: int) -> frozenset[Value]:
        bindings = self.scopes.lookup(func, name)
        if not bindings:
            return frozenset({UNKNOWN})
        return frozenset(self._bindings(bindings, depth)) or frozenset({UNKNOWN})

    def _bindings(self, bindings: list[Binding], depth: int) -> set[Value]:
        out: set[Value] = set()
        for b in bindings:
            # a binding of another project module (an attribute its base class binds) is read
            # by that module's values: its names are that module's
            owner = getattr(b.func, "owner_model", None)
            values = getattr(owner, "values", None)
            out |= (values if values is not None and values is not self else self).binding(b, depth)
        return out

    def binding(self, b: Binding, depth: int = 0) -> frozenset[Value]:
        """What one binding binds its name to."""
        kind = b.kind
        if kind == "import":
            return frozenset({Value("import", b.qual)})
        if kind == "param":
            fn = b.func
            if fn.cls is not None and not fn.is_static and fn.params and fn.params[0] == b.name:
                return frozenset({Value("class" if fn.is_classmethod else "instance", fn.cls)})
            out = {Value("param", b.name)}
            if b.annotation is not None:
                out |= self.annotation(b.func, b.annotation)
            if b.default is not None:
                out |= self.of(b.func, b.default, depth)
            return frozenset(out)
        if kind == "def":
            fn = _function_of(b)
            if fn is not None and _is_property(fn):
                return self._returned(fn, depth)
            return frozenset({Value("function", fn)}) if fn is not None else frozenset({UNKNOWN})
        if kind == "class":
            cls = next((c for c in self.classes.values() if c.node is b.node), None)
            return frozenset({Value("class", cls)}) if cls is not None else frozenset({UNKNOWN})
        if kind in ("del", "except"):
            return frozenset({UNKNOWN})
        if kind == "ann" and b.value is None:
            return self.annotation(b.func, b.annotation) if b.annotation is not None else frozenset({UNKNOWN})
        if b.value is None:
            return frozenset({UNKNOWN})
        vals = self.of(b.func, b.value, depth)
        if kind == "for":
            vals = self._elements(b.func, b.value, vals, depth)
        elif kind == "with":
            vals = frozenset(v if v.kind != "unknown" else v for v in vals)
        if b.unpack:
            vals = self._unpack(b.func, vals, b.unpack, depth)
        if kind == "ann" and b.annotation is not None:
            vals = vals | self.annotation(b.func, b.annotation)
        return vals

    def annotation(self, func: FunctionInfo, node: cst.BaseExpression) -> frozenset[Value]:
        """An annotation as evidence: a GradScaler type gives ``scaler``; another class gives
        ``other`` (never a GradScaler); ``Optional``/``Union``/``None`` and strings are looked
        through; anything else says nothing."""
        out: set[Value] = set()
        for text in _annotation_names(node):
            if text in ("None", "Optional", "Union", "typing.Optional", "typing.Union", "Any", "typing.Any", "object"):
                continue
            qual = self.imports.resolve(text) or text
            if qual.startswith("typing.") or qual.startswith("typing_extensions.") or qual in ("Type", "type"):
                continue
            if T.is_scaler_class(qual) or text in self.scaler_classes:
                out.add(Value("scaler", qual, spec=T.scaler_spec(qual)))
            elif T.is_optimizer_class(qual) or qual in ("torch.optim.Optimizer", "torch.optim.optimizer.Optimizer"):
                out.add(Value("optimizer", None))
            elif qual == T.TORCH_DEVICE:
                out.add(Value("device", None))
            elif qual in ("bool", "builtins.bool"):
                out.add(Value("bool"))
            elif (text[:1].isupper() or "." in qual) and not (qual == text and _AMP_SCALER_NAME.search(text)
                                                              and text.split(".", 1)[0] not in self.classes):
                # (a name neither imported nor defined here that says GradScaler, ``scaler:
                # "AMPScaler"``, a forward reference to an alias, says nothing either way)
                out.add(Value("other", qual))
        return frozenset(out)

    def _call(self, func: FunctionInfo, e: cst.Call, depth: int) -> frozenset[Value]:
        f = e.func
        site = self.call_of.get(e)
        text = dotted_text(f) if isinstance(f, (cst.Name, cst.Attribute)) else None
        if isinstance(f, cst.Attribute):
            method = f.attr.value
            if method == "scale" and len(e.args) >= 1:
                recv = expr_key(f.value)
                if recv is not None:
                    return frozenset({Value("scaled", recv)})
            if method in ("items", "values", "keys", "copy"):
                return self.of(func, f.value, depth)
            if method in ("to", "cuda", "cpu", "train", "eval", "half", "float", "requires_grad_", "detach", "clone"):
                inner = self.of(func, f.value, depth)
                if any(v.kind in ("instance", "other", "fsdp", "scaled") for v in inner):
                    return inner
        if text is None:
            return frozenset({UNKNOWN})
        if text == "getattr" and len(e.args) >= 2:
            name = literal_value(e.args[1].value)
            out: set[Value] = set()
            if isinstance(name, str):
                for base in self.of(func, e.args[0].value, depth):
                    out |= self._attr_of_value(base, name, depth)
            else:
                out.add(UNKNOWN)
            if len(e.args) >= 3:
                out |= self.of(func, e.args[2].value, depth)
            return frozenset(out)
        if text in _ELEMENT_OF and e.args:
            return self._elements(func, e.args[0].value, self.of(func, e.args[0].value, depth), depth)
        if text in _PASS_THROUGH and len(e.args) == 1:
            return self.of(func, e.args[0].value, depth)
        qual = self._qual(func, text)
        if qual is not None:
            return self._torch_ctor(qual, site, e, depth, func)
        if "." not in text:
            local = self._name(func, text, depth)
        else:
            local = self.of_key(func, text, depth)
        out = set()
        for v in local:
            if v.kind == "class":
                if v.data is not None and v.data.name in self.scaler_classes:
                    out.add(Value("scaler", v.data.name, site=site, enabled=_enabled_arg(e)))
                else:
                    out.add(Value("instance", v.data, site=site))
            elif v.kind == "function" and v.data is not None:
                out |= self._returned(v.data, depth)
            elif v.kind == "import":
                out |= self._torch_ctor(v.data, site, e, depth, func)
            else:
                out.add(UNKNOWN)
        if not out and text.rsplit(".", 1)[-1] in T.SCALER_CLASS_NAMES:
            out.add(Value("scaler", text, site=site, enabled=_enabled_arg(e)))
        return frozenset(out) or frozenset({UNKNOWN})

    def _torch_ctor(self, qual: str, site, e: cst.Call, depth: int, func: FunctionInfo) -> frozenset[Value]:
        if T.is_scaler_class(qual):
            spec = T.scaler_spec(qual)
            return frozenset({Value("scaler", qual, site=site, spec=spec, enabled=_enabled_arg(e, spec))})
        if T.is_optimizer_class(qual):
            params = e.args[0].value if e.args and e.args[0].keyword is None else None
            for a in e.args:
                if a.keyword is not None and a.keyword.value == "params":
                    params = a.value
            return frozenset({Value("optimizer", params, site=site)})
        if T.is_lr_scheduler(qual):
            return frozenset({Value("scheduler", qual, site=site)})
        if qual in T.FSDP:
            return frozenset({Value("fsdp", 1 if qual in T.FSDP1 else 2, site=site)})
        if qual == T.TORCH_DEVICE:
            first = literal_value(e.args[0].value) if e.args else NOT_LITERAL
            dev = first.split(":", 1)[0] if isinstance(first, str) else None
            return frozenset({Value("device", dev, site=site)})
        if qual in T.BCE_LOSS:
            return frozenset({Value("bce", qual, site=site)})
        if qual in ("functools.partial",) and e.args:
            return self.of(func, e.args[0].value, depth)
        last = qual.rsplit(".", 1)[-1]
        if last[:1].isupper():
            return frozenset({Value("other", qual, site=site)})
        return frozenset({UNKNOWN})

    # --- containers, unpacking, attributes ----------------------------------------------------

    def _subscript(self, func: FunctionInfo, e: cst.Subscript, depth: int) -> frozenset[Value]:
        base = self.of(func, e.value, depth)
        key = NOT_LITERAL
        if len(e.slice) == 1 and isinstance(e.slice[0].slice, cst.Index):
            key = literal_value(e.slice[0].slice.value)
        out: set[Value] = set()
        for v in base:
            if v.kind == "container":
                out |= self._element(func, v.data, key, depth)
            else:
                out.add(UNKNOWN)
        base_key = expr_key(e.value)
        if base_key is not None:
            for b in self.scopes.items(func, base_key):
                if key is NOT_LITERAL or b.key is None or b.key == key:
                    out |= self.of(b.func, b.value, depth)
        return frozenset(out) or frozenset({UNKNOWN})

    def _element(self, func: FunctionInfo, node, key, depth: int) -> set[Value]:
        out: set[Value] = set()
        if isinstance(node, cst.Dict):
            for el in node.elements:
                if not isinstance(el, cst.DictElement):
                    out.add(UNKNOWN)
                    continue
                k = literal_value(el.key)
                if key is NOT_LITERAL or k is NOT_LITERAL or k == key:
                    out |= self.of(func, el.value, depth)
        elif isinstance(node, (cst.ListComp, cst.SetComp, cst.GeneratorExp)):
            # ``[GradScaler("cuda") for _ in models]``: every element is what ``elt`` is
            out |= self.of(func, node.elt, depth)
        elif isinstance(node, cst.DictComp):
            out |= self.of(func, node.value, depth)
        elif isinstance(node, (cst.List, cst.Tuple, cst.Set)):
            elems = [el for el in node.elements]
            if isinstance(key, int) and not isinstance(key, bool) and -len(elems) <= key < len(elems) \
                    and not any(isinstance(x, cst.StarredElement) for x in elems):
                return set(self.of(func, elems[key].value, depth))
            for el in elems:
                out |= self.of(func, el.value, depth) if not isinstance(el, cst.StarredElement) else {UNKNOWN}
        return out

    def _elements(self, func: FunctionInfo, iterable, vals: frozenset[Value], depth: int) -> frozenset[Value]:
        """What a ``for`` loop over ``iterable`` binds its target to (before unpacking)."""
        if isinstance(iterable, cst.Call) and isinstance(iterable.func, (cst.Name, cst.Attribute)):
            name = dotted_text(iterable.func) or ""
            last = name.rsplit(".", 1)[-1]
            if name == "zip":
                parts = [self._elements(func, a.value, self.of(func, a.value, depth), depth) for a in iterable.args]
                return frozenset({Value("tuple_of", tuple(parts))})
            if name == "enumerate" and iterable.args:
                inner = iterable.args[0].value
                return frozenset({Value("tuple_of", (frozenset({UNKNOWN}),
                                                     self._elements(func, inner, self.of(func, inner, depth), depth)))})
            if last == "items" and isinstance(iterable.func, cst.Attribute):
                out = set()
                for v in self.of(func, iterable.func.value, depth):
                    if v.kind == "container" and isinstance(v.data, (cst.Dict, cst.DictComp)):
                        out.add(Value("tuple_of", (frozenset({UNKNOWN}), frozenset(self._element(func, v.data, NOT_LITERAL, depth)))))
                    else:
                        out.add(UNKNOWN)
                return frozenset(out)
            if last == "values" and isinstance(iterable.func, cst.Attribute):
                out = set()
                for v in self.of(func, iterable.func.value, depth):
                    out |= self._element(func, v.data, NOT_LITERAL, depth) if v.kind == "container" else {UNKNOWN}
                return frozenset(out)
        out: set[Value] = set()
        for v in vals:
            if v.kind == "container":
                out |= self._element(func, v.data, NOT_LITERAL, depth)
            else:
                out.add(UNKNOWN)
        return frozenset(out)

    def _unpack(self, func: FunctionInfo, vals: frozenset[Value], path: tuple[int, ...], depth: int) -> frozenset[Value]:
        cur = vals
        for i in path:
            nxt: set[Value] = set()
            for v in cur:
                if v.kind == "tuple_of" and i >= 0 and i < len(v.data):
                    nxt |= v.data[i]
                elif v.kind == "container" and isinstance(v.data, (cst.Tuple, cst.List)) and i >= 0:
                    nxt |= self._element(func, v.data, i, depth)
                else:
                    nxt.add(UNKNOWN)
            cur = frozenset(nxt)
        return cur

    def _attr_of_value(self, v: Value, attr: str, depth: int) -> frozenset[Value]:
        if v.kind == "instance" and v.data is not None:
            return self._attr_of_class(v.data, attr, depth)
        if v.kind == "class" and v.data is not None:
            return self._attr_of_class(v.data, attr, depth)
        return frozenset({UNKNOWN})

    def _attr_of_class(self, cls: ClassInfo, attr: str, depth: int) -> frozenset[Value]:
        bindings = self.scopes.attr(cls, attr)
        if not bindings:
            return frozenset({UNKNOWN})
        return frozenset(self._bindings(bindings, depth)) or frozenset({UNKNOWN})

    def returns_of(self, fn: FunctionInfo) -> list[cst.BaseExpression]:
        """The expressions ``fn`` returns (not those of functions it defines)."""
        rets = self._returns.get(fn)
        if rets is None:
            rets = self._returns[fn] = _returns(fn)
        return rets

    def _returned(self, fn: FunctionInfo, depth: int) -> frozenset[Value]:
        rets = self.returns_of(fn)
        out: set[Value] = set()
        for r in rets:
            out |= self.of(fn, r, depth)
        return frozenset(out) or frozenset({UNKNOWN})

    # --- classes deriving from GradScaler -------------------------------------------------------

    def _scaler_classes(self, classes: list[ClassInfo]) -> set[str]:
        out: set[str] = set()
        changed = True
        while changed:
            changed = False
            for c in classes:
                if c.name in out:
                    continue
                if any(T.is_scaler_class(q) or T.is_scaler_class(t) or t in out for t, q in zip(c.bases, c.base_quals)):
                    out.add(c.name)
                    changed = True
        return out


def kinds(vals: frozenset[Value]) -> set[str]:
    return {v.kind for v in vals}


def _enabled_arg(call: cst.Call, spec=None) -> bool | None:
    """``enabled=`` of a constructor: True when absent or literally true, False when literally
    false, None when it is an expression."""
    node = None
    params = spec.params if spec is not None else ()
    for a in call.args:
        if a.keyword is not None and a.keyword.value == "enabled":
            node = a.value
    if node is None and "enabled" in params:
        pos = [a for a in call.args if a.keyword is None and not a.star]
        i = params.index("enabled")
        if i < len(pos):
            node = pos[i].value
    if node is None:
        return True
    v = literal_value(node)
    if isinstance(v, (bool, int)) and v is not NOT_LITERAL:
        return bool(v)
    return None


def _annotation_names(node: cst.CSTNode) -> list[str]:
    """Dotted names an annotation mentions, strings parsed for names too."""
    import re

    out: list[str] = []
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, (cst.Name, cst.Attribute)):
            text = dotted_text(n)
            if text is not None:
                out.append(text)
                continue
        if isinstance(n, cst.SimpleString):
            out.extend(re.findall(r"[A-Za-z_][A-Za-z0-9_.]*", n.value[1:-1] if len(n.value) >= 2 else ""))
            continue
        if isinstance(n, cst.Subscript):
            stack.append(n.value)
            stack.extend(e.slice.value for e in n.slice if isinstance(e.slice, cst.Index))
            continue
        if isinstance(n, cst.BinaryOperation):  # ``GradScaler | None``
            stack.extend((n.left, n.right))
            continue
    return out


def _function_of(b: Binding) -> FunctionInfo | None:
    parent = b.func
    node = b.node
    if b.cls is not None:
        return b.cls.methods.get(node.name.value) if isinstance(node, cst.FunctionDef) else None
    return parent.local_defs.get(node.name.value) if isinstance(node, cst.FunctionDef) else None


def _is_property(fn: FunctionInfo) -> bool:
    return any(d in ("property", "functools.cached_property", "cached_property") for d in fn.decorators)


def _returns(fn: FunctionInfo) -> list[cst.BaseExpression]:
    out: list[cst.BaseExpression] = []
    stack = list(fn.body)
    while stack:
        s = stack.pop()
        if isinstance(s, (cst.FunctionDef, cst.ClassDef)):
            continue
        if isinstance(s, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            for small in s.body:
                if isinstance(small, cst.Return) and small.value is not None:
                    out.append(small.value)
            continue
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            part = getattr(s, name, None)
            if part is None:
                continue
            for p in part if isinstance(part, (list, tuple)) else [part]:
                inner = getattr(p, "body", None)
                if isinstance(inner, (list, tuple)):
                    stack.extend(inner)
                elif inner is not None:
                    stack.extend(getattr(inner, "body", ()) if not isinstance(inner, cst.SimpleStatementSuite) else [inner])
                if isinstance(p, cst.If):
                    stack.append(p)
    return out
