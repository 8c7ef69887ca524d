"""The per-file structure the AMP model is made of: functions, classes, call sites, regions.

Everything here is computed by one walk over the LibCST tree (:mod:`amplint.model.syntax`);
the scope, value, event and flow layers and the rules only read it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

import libcst as cst

from .. import torch_api as T


@dataclass(eq=False)
class Region:
    """A lexical region: autocast, grad-disabled, grad-enabled, or evaluation mode.

    kind:
      ``autocast``     ``with torch.autocast(...)`` or an autocast decorator;
      ``no_grad``      ``no_grad`` / ``inference_mode`` / ``set_grad_enabled(False)``;
      ``enable_grad``  ``enable_grad`` / ``set_grad_enabled(True)`` (cancels an outer no_grad);
      ``eval``         statements after ``<m>.eval()`` up to ``<m>.train()`` in the same block;
      ``eval_name``    the body of a function whose name marks it as evaluation code.
    """

    kind: str
    node: cst.CSTNode
    device: str | None = None  # autocast: literal device type, "" when not a literal
    dtype: str | None = None  # autocast: "float16", "bfloat16", "other" or None (default)
    enabled: bool | None = True  # autocast: literal enabled=, None when unknown
    target: str | None = None  # eval: the module put in eval mode
    calls: list["CallSite"] = field(default_factory=list)
    has_backward: bool = False

    @property
    def effective_dtype(self) -> str | None:
        """The dtype autocast really uses: an explicit one, else the device default."""
        if self.dtype is not None:
            return self.dtype
        from ..torch_api import default_autocast_dtype

        return default_autocast_dtype(self.device)

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"Region({self.kind}, device={self.device!r}, dtype={self.dtype!r}, enabled={self.enabled!r})"


@dataclass(eq=False)
class CallSite:
    node: cst.Call
    func: "FunctionInfo"
    stmt: cst.CSTNode  # the statement the call belongs to (noqa, fixes)
    text: str | None  # dotted text of the callee: "self.scaler.step"
    qual: str | None  # qualified callee when resolved through imports: "torch.nn.utils.clip_grad_norm_"
    recv: str | None  # dotted text of the receiver for method calls: "self.scaler"
    method: str | None  # attribute name for method calls: "step"
    regions: tuple[Region, ...]
    loops: tuple[cst.CSTNode, ...]
    in_lambda: bool = False
    #: the exclusive arms around the call: (branch node, test, arm index), outermost first
    arms: tuple = ()
    #: source (evaluation) order of the call among the calls and bindings of the file
    order: int = 0

    @property
    def recv_node(self) -> cst.BaseExpression | None:
        f = self.node.func
        return f.value if isinstance(f, cst.Attribute) else None

    def positional(self) -> list[cst.Arg]:
        return [a for a in self.node.args if a.keyword is None and not a.star]

    def keyword(self, name: str) -> cst.Arg | None:
        for a in self.node.args:
            if a.keyword is not None and a.keyword.value == name:
                return a
        return None

    def arg(self, index: int, name: str) -> cst.Arg | None:
        kw = self.keyword(name)
        if kw is not None:
            return kw
        pos = self.positional()
        return pos[index] if index < len(pos) else None

    def may_be_scaler_method(self) -> bool:
        """Its arguments fit the GradScaler method it names (``kwargs.update(layout=x)``: no)."""
        args = self.node.args
        return T.fits_scaler_method(self.method or "", sum(1 for a in args if a.keyword is None and not a.star),
                                    [a.keyword.value for a in args if a.keyword is not None],
                                    any(a.star for a in args))

    def argument_for(self, param: str, index: int, bound: bool) -> cst.Arg | None:
        """The argument this call passes for parameter ``param`` (at ``index`` of the callee's
        signature; ``bound``: a method called on an instance, whose receiver is not passed)."""
        arg = self.keyword(param)
        if arg is None:
            pos = self.positional()
            i = index - (1 if bound else 0)
            arg = pos[i] if 0 <= i < len(pos) else None
        return arg


@dataclass(eq=False)
class Alt:
    """A branch inside an expression (``a if c else b``, the right operand of and/or)."""

    test: cst.BaseExpression | None
    then: list["Item"]
    orelse: list["Item"]


@dataclass(eq=False)
class Bind:
    """``name := value`` inside an expression: the name is rebound at this point."""

    node: cst.NamedExpr


Item = Union[CallSite, Alt, Bind]


class Binding:
    """One binding of a name (pyflakes' Binding): where a name, ``self.<attr>`` or another
    dotted target gets a value.

    kind: ``import`` (``value`` is None, ``qual`` the imported dotted name), ``param``
    (``annotation``/``default``), ``assign``, ``ann`` (annotated assignment; class-body
    annotations are fields), ``aug`` (``x += v``: ``value`` is the increment), ``for``, ``with``,
    ``except``, ``walrus``, ``def``, ``class``, ``item`` (``d[key] = v``: ``name`` is the
    container, ``key`` the literal key or None), ``del``.

    ``unpack`` is the index path into ``value`` of a destructured target (``a, (b, c) = v``:
    ``b`` has ``(1, 0)``), ``-1`` for a starred element; for a literal tuple/list ``value`` the
    element itself is ``value`` and ``unpack`` is empty.
    """

    __slots__ = ("name", "kind", "node", "value", "func", "stmt", "order", "unpack", "annotation", "default", "qual",
                 "key", "loops", "cls", "arms", "regions")

    def __init__(self, name, kind, node, value, func, stmt, order, unpack=(), annotation=None, default=None, qual=None,
                 key=None, loops=(), cls=None, arms=(), regions=()):
        self.name: str = name
        self.kind: str = kind
        self.node = node
        self.value = value
        self.func: "FunctionInfo" = func
        self.stmt = stmt
        self.order: int = order
        self.unpack: tuple[int, ...] = unpack
        self.annotation = annotation
        self.default = default
        self.qual: str | None = qual
        self.key = key
        self.loops: tuple = loops
        self.cls: "ClassInfo | None" = cls  # the class whose body binds it (class attributes, methods)
        self.arms: tuple = arms  # the exclusive arms around it, as for call sites
        self.regions: tuple = regions  # the lexical regions around it (autocast, no_grad...)

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"<Binding {self.kind} {self.name}@{self.order}>"


@dataclass(eq=False)
class Assignment:
    func: "FunctionInfo"
    stmt: cst.CSTNode
    targets: tuple[str | None, ...]  # dotted texts (None for unpacking / subscripts)
    value: cst.BaseExpression | None


@dataclass(eq=False)
class Reference:
    """A Name/Attribute chain (or import alias) that resolves to a torch AMP symbol."""

    node: cst.CSTNode
    qual: str
    stmt: cst.CSTNode
    func: "FunctionInfo"
    kind: str  # "expr" | "import" | "decorator"


@dataclass(eq=False)
class ClassInfo:
    node: cst.ClassDef
    name: str
    bases: tuple[str, ...]  # dotted texts of bases
    base_quals: tuple[str | None, ...]
    methods: dict[str, "FunctionInfo"] = field(default_factory=dict)
    parent: "ClassInfo | None" = None
    owner_model: object = None  # the AmpModel of the module that defines it


@dataclass(eq=False)
class FunctionInfo:
    node: cst.CSTNode  # FunctionDef, or Module for module-level code
    name: str
    qualname: str
    cls: ClassInfo | None
    parent: "FunctionInfo | None"
    params: list[str] = field(default_factory=list)
    param_annotations: dict[str, str | None] = field(default_factory=dict)
    kwonly: set[str] = field(default_factory=set)
    star_params: set[str] = field(default_factory=set)  # *args / **kwargs
    is_static: bool = False
    is_classmethod: bool = False
    regions: tuple[Region, ...] = ()  # from decorators (and the name, for eval_name)
    decorators: tuple[str | None, ...] = ()  # qualified or dotted decorator callee texts
    calls: list[CallSite] = field(default_factory=list)
    local_defs: dict[str, "FunctionInfo"] = field(default_factory=dict)
    assigned: set[str] = field(default_factory=set)  # local names bound in the body
    owner_model: object = None  # the AmpModel of the module that defines it
    globals_declared: set[str] = field(default_factory=set)  # ``global`` and ``nonlocal`` names
    nonlocals: set[str] = field(default_factory=set)

    @property
    def body(self) -> list[cst.CSTNode]:
        node = self.node
        if isinstance(node, cst.Module):
            return list(node.body)
        body = node.body  # type: ignore[attr-defined]
        if isinstance(body, cst.IndentedBlock):
            return list(body.body)
        return [body]  # SimpleStatementSuite

    @property
    def is_module(self) -> bool:
        return type(self.node) is cst.Module

    def is_local(self, name: str) -> bool:
        return not self.is_module and name not in self.globals_declared and (name in self.assigned or name in self.params)

    def __repr__(self) -> str:  # pragma: no cover
        return f"<FunctionInfo {self.qualname}>"
