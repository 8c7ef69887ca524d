"""Lexical facts about GradScaler constructors and about how values are used.

Shared by the rules that read the scaler more locally than the flow analysis does (AMP010,
AMP011, AMP013-AMP016, AMP901, AMP902).  Everything is computed lazily, on first request, and
cached on the model: a rule that does not ask pays nothing, and a file without a scaler
constructor or scaler call asks almost nothing.

- :func:`facts` ``(model)``: the per-file :class:`UsageFacts` (constructors and their
  bindings, scaler call sites, scaler keys);
- :func:`name_uses`: the uses of some names (and of some expression nodes) in one function,
  each with its chain of parents, in source order;
- :func:`in_eval_code`: whether a call sits in evaluation code (the regions AMP201 owns);
- small expression helpers (:func:`mentions`, :func:`numeric_literal`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from .syntax import NOT_LITERAL, child_fields, children, expr_key, literal_value
from .names import dotted_text
from .scalers import owner_class
from .structure import CallSite, ClassInfo, FunctionInfo

from ..torch_api import DEVICE_FIRST, INIT_SCALE_FIRST, SHARDED  # noqa: E402  (re-exported for the rules)


@dataclass(eq=False)
class Ctor:
    """One GradScaler constructor call."""

    site: CallSite
    qual: str | None  # resolved callee, None for a class of this file deriving from GradScaler
    family: str | None  # "device_first" | "init_scale_first" | "sharded" | None (unknown signature)
    targets: tuple[str, ...]  # the dotted names it is bound to (empty when not bound)
    scope: ClassInfo | None  # the class whose code constructs it (None: plain functions / module)

    @property
    def params(self) -> tuple[str, ...]:
        if self.family == "device_first":
            return DEVICE_FIRST
        if self.family == "init_scale_first":
            return INIT_SCALE_FIRST
        if self.family == "sharded":
            return SHARDED
        return ()

    def arg(self, name: str) -> cst.Arg | None:
        params = self.params
        if not params:
            return self.site.keyword(name)
        return self.site.arg(params.index(name), name) if name in params else None

    @property
    def enabled(self) -> bool | None:
        """False for a literal ``enabled=False``; True when absent or literally true; else None."""
        a = self.arg("enabled")
        if a is None:
            return True
        v = literal_value(a.value)
        return bool(v) if isinstance(v, (bool, int)) and v is not NOT_LITERAL else None

    @property
    def is_sharded(self) -> bool:
        return self.family == "sharded"


@dataclass(eq=False)
class UsageFacts:
    ctors: list[Ctor] = field(default_factory=list)
    #: scaler method calls (recv is a scaler), by method name
    scaler_calls: dict[str, list[CallSite]] = field(default_factory=dict)

    def calls(self, *methods: str) -> list[CallSite]:
        out: list[CallSite] = []
        for m in methods:
            out.extend(self.scaler_calls.get(m, ()))
        return out


def facts(model) -> UsageFacts:
    cached = getattr(model, "_usage_facts", None)
    if cached is not None:
        return cached
    uf = UsageFacts()
    table = model.scalers
    bound: dict[int, list[str]] = {}
    for a in model.assignments:
        ctor = table.ctor_in(a.value)
        if ctor is None:
            continue
        for node in _ctor_arms(table, a.value):
            bound.setdefault(id(node), []).extend(t for t in a.targets if t is not None)
    for site in table.ctor_sites:
        qual = site.qual
        family = ctor_family(qual)
        uf.ctors.append(Ctor(site, qual, family, tuple(bound.get(id(site.node), ())), owner_class(site.func)))
    for c in model.calls:
        if c.recv is None or c.method is None or c.in_lambda:
            continue
        if model.is_scaler(c.func, c.recv):
            uf.scaler_calls.setdefault(c.method, []).append(c)
    model._usage_facts = uf
    return uf


def ctor_family(qual: str | None) -> str | None:
    from ..torch_api import scaler_spec

    spec = scaler_spec(qual)
    return spec.family if spec is not None else None


def _ctor_arms(table, value) -> list[cst.Call]:
    if value is None:
        return []
    if table.is_ctor_call(value):
        return [value]
    if isinstance(value, cst.IfExp):
        return _ctor_arms(table, value.body) + _ctor_arms(table, value.orelse)
    if isinstance(value, cst.BooleanOperation):
        return _ctor_arms(table, value.left) + _ctor_arms(table, value.right)
    return []


def always_ctor(model, value) -> bool:
    """``value`` is a GradScaler constructor on every arm (never ``None``)."""
    table = model.scalers
    if value is None:
        return False
    if table.is_ctor_call(value):
        return True
    if isinstance(value, cst.IfExp):
        return always_ctor(model, value.body) and always_ctor(model, value.orelse)
    return False


def bound_to_other_class(model, key: str) -> bool:
    """Some binding of ``key`` (in any function) may be a class other than torch's own
    GradScaler: a subclass (``ClosureGradScaler()``), a factory call, an unknown value."""
    for a in model.assignments:
        if key not in a.targets:
            continue
        for arm in _arms(a.value):
            if isinstance(arm, cst.Name) and arm.value == "None":
                continue
            if isinstance(arm, cst.Call) and model.scalers.is_ctor_call(arm):
                if ctor_family(model.imports.qualify(arm.func)) is not None:
                    continue
            if isinstance(arm, (cst.Name, cst.Attribute)) and model.scalers.is_scaler(a.func, dotted_text(arm)):
                continue
            return True
    return False


def _arms(value) -> list:
    if isinstance(value, cst.IfExp):
        return _arms(value.body) + _arms(value.orelse)
    if isinstance(value, cst.BooleanOperation):
        return _arms(value.left) + _arms(value.right)
    return [value]


def in_eval_code(model, site) -> bool:
    from .flow.queries import in_eval_code as _in_eval

    return _in_eval(model, site)


# --- uses of names in one function ----------------------------------------------------


@dataclass(eq=False)
class Use:
    node: cst.CSTNode  # the Name (or the watched node)
    parents: tuple[tuple[cst.CSTNode, str], ...]  # (ancestor, field of the ancestor holding the child), outermost first
    index: int  # source order within the walk
    stmt: cst.CSTNode  # the innermost statement (small statement, or compound statement header)
    store: bool  # a binding (assignment / for / with target), not a read

    @property
    def name(self) -> str | None:
        return self.node.value if isinstance(self.node, cst.Name) else None

    def parent(self, k: int = 1) -> tuple[cst.CSTNode | None, str | None]:
        if k > len(self.parents):
            return None, None
        return self.parents[-k]


_STMT_TYPES = (cst.BaseSmallStatement, cst.BaseCompoundStatement)
_STORE_PARENTS = {
    (cst.AssignTarget, "target"),
    (cst.AugAssign, "target"),
    (cst.AnnAssign, "target"),
    (cst.For, "target"),
    (cst.AsName, "name"),
    (cst.NamedExpr, "target"),
    (cst.CompFor, "target"),
}


def name_uses(func: FunctionInfo, names: set[str] | frozenset[str], nodes: set[int] = frozenset()) -> list[Use]:
    """Every occurrence of ``names`` (and of the nodes whose ids are in ``nodes``) in the body of
    ``func``, outside nested functions, classes and lambdas, in source order."""
    out: list[Use] = []
    counter = [0]

    def visit(node: cst.CSTNode, parents: list, stmt: cst.CSTNode) -> None:
        counter[0] += 1
        t = type(node)
        if isinstance(node, _STMT_TYPES):
            stmt = node
        if id(node) in nodes:
            out.append(Use(node, tuple(parents), counter[0], stmt, False))
        if t is cst.Name:
            if node.value in names:
                out.append(Use(node, tuple(parents), counter[0], stmt, _is_store(parents)))
            return
        if t in (cst.FunctionDef, cst.Lambda):
            return
        if t is cst.Attribute:
            parents.append((node, "value"))
            visit(node.value, parents, stmt)
            parents.pop()
            return
        if t is cst.Arg:
            parents.append((node, "value"))
            visit(node.value, parents, stmt)
            parents.pop()
            return
        for fname in child_fields(t):
            v = getattr(node, fname)
            if isinstance(v, cst.CSTNode):
                parents.append((node, fname))
                visit(v, parents, stmt)
                parents.pop()
            elif isinstance(v, (list, tuple)):
                for x in v:
                    if isinstance(x, cst.CSTNode):
                        parents.append((node, fname))
                        visit(x, parents, stmt)
                        parents.pop()

    body = func.body
    for s in body:
        visit(s, [], s)
    return out


def _is_store(parents: list) -> bool:
    for node, fname in reversed(parents):
        if isinstance(node, (cst.Tuple, cst.List, cst.Element, cst.StarredElement)):
            continue
        return (type(node), fname) in _STORE_PARENTS
    return False


def block_of(func: FunctionInfo, stmt: cst.CSTNode) -> list[cst.CSTNode] | None:
    """The statement list (block) of ``func`` that holds ``stmt``."""

    def search(stmts) -> list | None:
        stmts = list(stmts)
        for s in stmts:
            if s is stmt:
                return stmts
            for part in _sub_blocks(s):
                hit = search(part)
                if hit is not None:
                    return hit
        return None

    return search(func.body)


def _sub_blocks(s: cst.CSTNode) -> list[list[cst.CSTNode]]:
    out = []
    if isinstance(s, cst.FunctionDef):  # a class body belongs to the enclosing function
        return out
    for name in ("body", "orelse", "finalbody"):
        part = getattr(s, name, None)
        if part is None:
            continue
        if isinstance(part, cst.If):
            out.append([part])
            continue
        inner = getattr(part, "body", None)
        if isinstance(part, cst.IndentedBlock):
            out.append(list(part.body))
        elif isinstance(inner, cst.IndentedBlock):
            out.append(list(inner.body))
        elif isinstance(inner, (list, tuple)):
            out.append(list(inner))
    for h in getattr(s, "handlers", ()) or ():
        if isinstance(h.body, cst.IndentedBlock):
            out.append(list(h.body.body))
    for c in getattr(s, "cases", ()) or ():
        if isinstance(c.body, cst.IndentedBlock):
            out.append(list(c.body.body))
    return out


def guarded(func: FunctionInfo, stmt: cst.CSTNode) -> bool:
    """``stmt`` sits inside an ``if`` / ``while`` / ``try`` handler / ``match`` of ``func``."""

    def search(stmts, cond: bool) -> bool | None:
        for s in stmts:
            if s is stmt:
                return cond
            if isinstance(s, cst.FunctionDef):
                continue
            c = cond or (isinstance(s, (cst.If, cst.While, cst.Match)) and not _main_guard(s))
            for part in _sub_blocks(s):
                hit = search(part, c)
                if hit is not None:
                    return hit
            for h in getattr(s, "handlers", ()) or ():
                if isinstance(h.body, cst.IndentedBlock):
                    hit = search(h.body.body, True)
                    if hit is not None:
                        return hit
        return None

    return bool(search(func.body, False))


def _main_guard(stmt) -> bool:
    """``if __name__ == "__main__":`` (no ``else``): the script's own entry, which always runs
    when the file is run as a script."""
    if not isinstance(stmt, cst.If) or stmt.orelse is not None:
        return False
    t = stmt.test
    if not isinstance(t, cst.Comparison) or len(t.comparisons) != 1 or not isinstance(t.comparisons[0].operator, cst.Equal):
        return False
    sides = (t.left, t.comparisons[0].comparator)
    names = [x for x in sides if isinstance(x, cst.Name) and x.value == "__name__"]
    strings = [x for x in sides if isinstance(x, cst.SimpleString) and x.evaluated_value == "__main__"]
    return len(names) == 1 and len(strings) == 1


# --- expressions ----------------------------------------------------------------------


def mentions(node: cst.CSTNode, pred) -> bool:
    """Some Name/Attribute chain inside ``node`` satisfies ``pred(dotted_text)``."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, (cst.Name, cst.Attribute)):
            text = dotted_text(n)
            if text is not None:
                if pred(text):
                    return True
                # ``a.b.c`` also mentions ``a.b`` and ``a``
                parts = text.split(".")
                if any(pred(".".join(parts[:i])) for i in range(1, len(parts))):
                    return True
                continue
        stack.extend(children(n))
    return False


def calls_in(node: cst.CSTNode) -> list[cst.Call]:
    out = []
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, cst.Call):
            out.append(n)
        if isinstance(n, (cst.Lambda,)):
            continue
        stack.extend(children(n))
    return out


def numeric_literal(node: cst.BaseExpression | None) -> bool:
    """An int/float literal, possibly negated or combined arithmetically (``2.0**16``)."""
    if node is None:
        return False
    if isinstance(node, (cst.Integer, cst.Float)):
        return True
    if isinstance(node, cst.UnaryOperation):
        return numeric_literal(node.expression)
    if isinstance(node, cst.BinaryOperation):
        return numeric_literal(node.left) and numeric_literal(node.right)
    return False


def key_last(key: str) -> str:
    return key.rsplit(".", 1)[-1]


def scaler_ish(text: str) -> bool:
    return "scaler" in key_last(text).lower()


def is_simple(node: cst.CSTNode) -> bool:
    return isinstance(node, (cst.Name, cst.Attribute, cst.Call, cst.Subscript))


__all__ = [
    "Ctor",
    "UsageFacts",
    "Use",
    "facts",
    "ctor_family",
    "always_ctor",
    "bound_to_other_class",
    "in_eval_code",
    "name_uses",
    "block_of",
    "guarded",
    "mentions",
    "calls_in",
    "numeric_literal",
    "expr_key",
    "scaler_ish",
    "is_simple",
]
