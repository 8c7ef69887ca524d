"""One walk over a LibCST module that collects everything the AMP model needs.

The walk is hand-written rather than a ``CSTVisitor``: it reads dataclass fields directly,
skips whitespace nodes, and records for every statement the calls it makes in evaluation
order (receiver, then arguments, then the call itself), which is what the flow analysis
replays.  It never walks the tree twice.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import re
from typing import Iterable

import libcst as cst

from . import names as N
from .names import ImportTable, dotted_text
from .structure import Alt, Assignment, Bind, Binding, CallSite, ClassInfo, FunctionInfo, Item, Reference, Region

#: GradScaler methods a name may alias (``do_step = functools.partial(scaler.step, opt)``)
_ALIASED_METHODS = frozenset({"step", "update", "unscale_"})
_SKIP_FIELDS = {
    "lpar",
    "rpar",
    "comma",
    "equal",
    "dot",
    "semicolon",
    "leading_lines",
    "lines_after_decorators",
    "lbracket",
    "rbracket",
    "lbrace",
    "rbrace",
    "colon",
    "header",
    "footer",
    "indent",
    "operator",
    "trailing_whitespace",
    "star",
    "asynchronous",
    "whitespace_before",
    "whitespace_after",
}
_FIELDS: dict[type, tuple[str, ...]] = {}


def child_fields(cls: type) -> tuple[str, ...]:
    fs = _FIELDS.get(cls)
    if fs is None:
        fs = _FIELDS[cls] = tuple(
            f.name for f in dataclasses.fields(cls) if f.name not in _SKIP_FIELDS and not f.name.startswith("whitespace")
        )
    return fs


#: what a field value is, by its exact type: 1 a node, 2 a leaf node (:data:`_LEAF_TYPES`), 3 a
#: list or tuple, 4 anything else (never 0: a kind once seen is answered by the table alone). Every LibCST class is an ABC, so ``isinstance`` on one goes
#: through ``ABCMeta.__instancecheck__``: the walks ask this table instead (millions of times)
_KIND: dict[type, int] = {}


def _kind(t: type) -> int:
    hit = _KIND.get(t)
    if hit is None:
        hit = _KIND[t] = (2 if issubclass(t, _LEAF_TYPES) else 1) if issubclass(t, cst.CSTNode) \
            else 3 if issubclass(t, (list, tuple)) else 4
    return hit


def children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """The child nodes the model cares about (whitespace, commas and the like left out)."""
    out: list[cst.CSTNode] = []
    kinds = _KIND
    for name in child_fields(type(node)):
        v = getattr(node, name)
        k = kinds.get(type(v)) or _kind(type(v))
        if k == 1 or k == 2:
            out.append(v)
        elif k == 3:
            out.extend(x for x in v if (kinds.get(type(x)) or _kind(type(x))) in (1, 2))
    return out


def contains(root: cst.CSTNode, target: cst.CSTNode) -> bool:
    """``target`` is ``root`` or one of its descendants (by identity)."""
    stack = [root]
    while stack:
        n = stack.pop()
        if n is target:
            return True
        stack.extend(children(n))
    return False


_LEAF_TYPES = (
    cst.SimpleString,
    cst.Integer,
    cst.Float,
    cst.Imaginary,
    cst.Ellipsis,
    cst.Newline,
    cst.Comment,
    cst.EmptyLine,
    cst.SimpleWhitespace,
    cst.ParenthesizedWhitespace,
    cst.TrailingWhitespace,
)

_STRING_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")


def literal_value(node: cst.BaseExpression | None) -> object:
    """The value of a literal string/number/bool/None, else the sentinel ``NOT_LITERAL``."""
    if node is None:
        return NOT_LITERAL
    if isinstance(node, cst.SimpleString):
        try:
            return node.evaluated_value
        except Exception:  # pragma: no cover - malformed literal
            return NOT_LITERAL
    if isinstance(node, cst.Name) and node.value in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[node.value]
    if isinstance(node, cst.Integer):
        try:
            return int(node.value.replace("_", ""), 0)
        except ValueError:
            return NOT_LITERAL
    if isinstance(node, cst.Float):
        try:
            return float(node.value.replace("_", ""))
        except ValueError:
            return NOT_LITERAL
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        v = literal_value(node.expression)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return -v
    return NOT_LITERAL


class _NotLiteral:
    def __repr__(self) -> str:  # pragma: no cover
        return "NOT_LITERAL"


NOT_LITERAL = _NotLiteral()


def expr_key(node: cst.BaseExpression | None) -> str | None:
    """A stable text key for a receiver: dotted names and simple subscripts (``opts[0]``)."""
    if node is None:
        return None
    if isinstance(node, (cst.Name, cst.Attribute)):
        text = dotted_text(node)
        if text is not None:
            return text
        if isinstance(node, cst.Attribute):
            inner = expr_key(node.value)
            return f"{inner}.{node.attr.value}" if inner is not None else None
        return None
    if isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
        base = expr_key(node.value)
        idx = node.slice[0].slice.value
        if base is None:
            return None
        if isinstance(idx, (cst.Integer, cst.SimpleString)):
            return f"{base}[{idx.value}]"
        inner = expr_key(idx)
        return f"{base}[{inner}]" if inner is not None else None
    return None


class Builder:
    def __init__(self, module: cst.Module, eval_patterns: Iterable[str] = (), star_names=None) -> None:
        self.module = module
        self.imports = ImportTable(star_names)
        self.functions: list[FunctionInfo] = []
        self.classes: list[ClassInfo] = []
        self.calls: list[CallSite] = []
        self.assignments: list[Assignment] = []
        self.refs: list[Reference] = []
        #: import aliases in an ``except ImportError:`` handler (a compatibility fallback: the
        #: ``try`` body's import is the one a supported torch runs)
        self.fallback_imports: set[int] = set()
        self._in_fallback = 0
        self.regions: list[Region] = []
        self.seqs: dict[cst.CSTNode, list[Item]] = {}
        self.eval_patterns = tuple(eval_patterns)
        # variables bound to a region context manager (``ctx = torch.autocast(...)``) or to a
        # partial of one (``amp_autocast = partial(torch.autocast, ...)``)
        self.region_vars: dict[tuple[int, str], cst.BaseExpression] = {}
        self.region_partials: dict[tuple[int, str], cst.Call] = {}
        # ... or to a function of no arguments that returns one (``amp_ctx = lambda: autocast(...)``)
        self.region_factories: dict[tuple[int, str], cst.BaseExpression] = {}
        # names bound to a partial of a torch function with keyword arguments only
        # (``clip = functools.partial(torch.nn.utils.clip_grad_norm_, max_norm=1.0)``): a call of
        # the name is a call of the function
        self.call_partials: dict[tuple[int, str], str] = {}
        # names bound to a GradScaler protocol method (``step = scaler.step``,
        # ``do_step = functools.partial(scaler.step, optimizer)``): ``(the bound method's
        # Attribute node, the arguments the partial fixes)``; a call of such a name is that
        # method's call (a stand-in), unless the name is bound to anything else but the
        # optimizer's own ``step`` (the fp32 arm of ``do_step = ... if amp else opt.step``)
        self.method_aliases: dict[tuple[int, str], tuple | None] = {}
        # every condition tested by if / while / conditional expressions
        self.tests: list[cst.BaseExpression] = []
        self.test_funcs: dict[cst.CSTNode, FunctionInfo] = {}
        #: calls standing in for statements that act like one (``p.grad += c`` is
        #: ``p.grad.add_(...)``), mapped to the statement: findings on them are placed there
        self.stand_ins: dict[cst.Call, cst.CSTNode] = {}
        #: the loops around an ``if`` test (outermost first): it is tested again on every pass
        self.test_loops: dict[cst.CSTNode, tuple] = {}
        # receiver or argument expression -> the call it belongs to
        self.parent_call: dict[cst.CSTNode, cst.Call] = {}
        # dotted texts read as values (arguments, assigned values, returns...), per function
        self.value_texts: dict[FunctionInfo, set[str]] = {}
        # every binding of a name or dotted target, in source order (the scope layer indexes them)
        self.bindings: list[Binding] = []
        # statement -> (the statement list holding it, its index, the node owning that list)
        self.blocks: dict[cst.CSTNode, tuple[list, int, cst.CSTNode]] = {}
        # exclusive arms: (branch id, arm index) -> calls in that arm; branch id -> number of arms
        self.arm_calls: dict[tuple[int, int], list[cst.CSTNode]] = {}
        self.arms_of: dict[int, int] = {}
        # condition of an if / while / conditional expression -> the calls of its arms
        self.guarded_calls: dict[cst.CSTNode, list[CallSite]] = {}
        self._order = 0

    # --- entry ---------------------------------------------------------------------

    def build(self) -> FunctionInfo:
        self._collect_imports(self.module.body)
        top = FunctionInfo(node=self.module, name="<module>", qualname="<module>", cls=None, parent=None)
        self.functions.append(top)
        ctx = _Ctx(func=top, cls=None, regions=(), loops=(), stmt=self.module, lam=False)
        self.block(self.module.body, ctx, self.module)
        return top

    def _collect_imports(self, stmts: Iterable[cst.CSTNode], fallback: bool = False) -> None:
        for s in stmts:
            if isinstance(s, cst.SimpleStatementLine):
                for small in s.body:
                    if isinstance(small, (cst.Import, cst.ImportFrom)):
                        self.imports.add(small, fallback=fallback)
            elif isinstance(s, (cst.If, cst.Try, cst.TryStar, cst.With, cst.FunctionDef, cst.ClassDef, cst.For, cst.While)):
                for name in ("body", "orelse", "handlers", "finalbody"):
                    part = getattr(s, name, None)
                    if part is None:
                        continue
                    if isinstance(part, (list, tuple)):
                        for h in part:
                            self._collect_imports(_block_body(h), fallback or bool(_catches_import_error(h)))
                    else:
                        self._collect_imports(_block_body(part), fallback)

    # --- statements ----------------------------------------------------------------

    def block(self, stmts: Iterable[cst.CSTNode], ctx: "_Ctx", owner: cst.CSTNode | None = None) -> None:
        eval_region: Region | None = None
        grad_region: Region | None = None  # after a bare ``torch.set_grad_enabled(False)``
        stmts = list(stmts)
        blocks = self.blocks
        for i, s in enumerate(stmts):
            blocks[s] = (stmts, i, owner)
            c = ctx if eval_region is None else ctx.push(eval_region)
            c = c if grad_region is None else c.push(grad_region)
            self.stmt(s, c)
            toggle = _eval_toggle(s)
            if toggle is not None:
                kind, target, call = toggle
                if kind == "eval":
                    if eval_region is None:
                        eval_region = Region("eval", node=call, target=target)
                        self.regions.append(eval_region)
                else:
                    eval_region = None
            mode, call = self._grad_toggle(s)
            if mode is False and grad_region is None:
                grad_region = Region("no_grad", node=call)
                self.regions.append(grad_region)
            elif mode is not None and mode is not False:
                grad_region = None

    def _grad_toggle(self, s: cst.CSTNode) -> tuple[object, cst.Call | None]:
        """A statement ``torch.set_grad_enabled(False)``: (False, call); ``(True)`` or a
        variable: (True or NOT_LITERAL, call); anything else: (None, None)."""
        if not isinstance(s, cst.SimpleStatementLine):
            return None, None
        for small in s.body:
            if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
                call = small.value
                if self.imports.qualify(call.func) in N.SET_GRAD_ENABLED:
                    return _arg_value(list(call.args), 0, "mode"), call
        return None, None

    def stmt(self, s: cst.CSTNode, ctx: "_Ctx") -> None:
        t = type(s)
        if t is cst.SimpleStatementLine or t is cst.SimpleStatementSuite:
            c = ctx.at(s)
            for small in s.body:  # type: ignore[attr-defined]
                self.small(small, c)
        elif t is cst.If:
            c = ctx.at(s)
            self.tests.append(s.test)
            self.test_funcs[s.test] = ctx.func
            if ctx.loops:
                self.test_loops[s.test] = ctx.loops
            self.seqs[s] = self.seq(s.test, c)
            self.arms_of[id(s)] = 2
            self.block(_block_body(s.body), c.arm(s, s.test, 0), s)
            if s.orelse is not None:
                if isinstance(s.orelse, cst.If):
                    self.stmt(s.orelse, ctx.arm(s, s.test, 1))
                else:
                    self.block(_block_body(s.orelse.body), c.arm(s, s.test, 1), s.orelse)
        elif t is cst.For:
            c = ctx.at(s)
            self.seqs[s] = self.seq(s.iter, c)
            self.assign_target(s.target, c)
            self.bind(s.target, s.iter, "for", c.loop(s))
            self.block(_block_body(s.body), c.loop(s), s)
            if s.orelse is not None:
                self.block(_block_body(s.orelse.body), c, s.orelse)
        elif t is cst.While:
            c = ctx.at(s)
            self.tests.append(s.test)
            self.test_funcs[s.test] = ctx.func
            self.seqs[s] = self.seq(s.test, c)
            self.block(_block_body(s.body), c.loop(s).guard(s.test), s)
            if s.orelse is not None:
                self.block(_block_body(s.orelse.body), c, s.orelse)
        elif t is cst.With:
            c = ctx.at(s)
            items: list[Item] = []
            inner = c
            for wi in s.items:
                self.expr(wi.item, c, items)
                if wi.asname is not None:
                    self.assign_target(wi.asname.name, c)
                    self.bind(wi.asname.name, wi.item, "with", c)
                region = self.region_of(wi.item, c)
                if region is not None:
                    self.regions.append(region)
                    inner = inner.push(region)
            self.seqs[s] = items
            self.block(_block_body(s.body), inner, s)
        elif t is cst.Try or t is cst.TryStar:
            c = ctx.at(s)
            self.block(_block_body(s.body), c, s)
            for h in s.handlers:
                if h.type is not None:
                    self.seq(h.type, c.at(h))
                if h.name is not None:
                    self.assign_target(h.name.name, c)
                    self.bind(h.name.name, h.type, "except", c)
                fallback = _catches_import_error(h)
                self._in_fallback += fallback
                self.block(_block_body(h.body), c, h)
                self._in_fallback -= fallback
            if s.orelse is not None:
                self.block(_block_body(s.orelse.body), c, s.orelse)
            if s.finalbody is not None:
                self.block(_block_body(s.finalbody.body), c, s.finalbody)
        elif t is cst.FunctionDef:
            self.function(s, ctx)
        elif t is cst.ClassDef:
            self.klass(s, ctx)
        elif t is cst.Match:
            c = ctx.at(s)
            self.seqs[s] = self.seq(s.subject, c)
            self.arms_of[id(s)] = len(s.cases)
            for i, case in enumerate(s.cases):
                ci = c.arm(s, s.subject, i)
                if case.guard is not None:
                    self.seq(case.guard, ci)
                self.block(_block_body(case.body), ci, case)
        else:  # pragma: no cover - unknown compound statement: walk generically
            self.generic(s, ctx.at(s), [])

    def small(self, s: cst.CSTNode, ctx: "_Ctx") -> None:
        t = type(s)
        out: list[Item] = []
        if t is cst.Expr:
            self.expr(s.value, ctx, out)
        elif t is cst.Assign:
            self.expr(s.value, ctx, out)
            targets = []
            for at in s.targets:
                self.assign_target(at.target, ctx, out)
                self.bind(at.target, s.value, "assign", ctx)
                targets.append(expr_key(at.target))
            self.assignments.append(Assignment(ctx.func, ctx.stmt, tuple(targets), s.value))
            self._note_region_var(targets, s.value, ctx)
        elif t is cst.AnnAssign:
            if s.value is not None:
                self.expr(s.value, ctx, out)
            self.expr(s.annotation.annotation, ctx, [])
            self.assign_target(s.target, ctx, out)
            self.bind(s.target, s.value, "ann", ctx, annotation=s.annotation.annotation)
            key = expr_key(s.target)
            self.assignments.append(Assignment(ctx.func, ctx.stmt, (key,), s.value))
            if s.value is not None:
                self._note_region_var([key], s.value, ctx)
        elif t is cst.AugAssign:
            self.expr(s.value, ctx, out)
            self.assign_target(s.target, ctx, out)
            self.bind(s.target, s.value, "aug", ctx)
            op = type(s.operator)
            if op is cst.AddAssign or op is cst.SubtractAssign:
                text = dotted_text(s.target)
                if text is not None and "grad" in text.split(".")[1:]:
                    # ``var.grad.data += server_c[name] - local_c[name]``: an edit of the
                    # gradients, as ``var.grad.data.add_(...)`` is
                    call = cst.Call(func=cst.Attribute(value=s.target, attr=cst.Name(
                        "add_" if op is cst.AddAssign else "sub_")))
                    self.stand_ins[call] = s
                    self.expr(call, ctx, out)
        elif t is cst.Return:
            if s.value is not None:
                self.expr(s.value, ctx, out)
        elif t is cst.Raise:
            if s.exc is not None:
                self.expr(s.exc, ctx, out)
            if s.cause is not None:
                self.expr(s.cause.item, ctx, out)
        elif t is cst.Assert:
            self.expr(s.test, ctx, out)
            if s.msg is not None:
                self.expr(s.msg, ctx, [])
        elif t is cst.Del:
            self.expr(s.target, ctx, out)
            self.bind(s.target, None, "del", ctx)
        elif t is cst.Import or t is cst.ImportFrom:
            self.import_stmt(s, ctx)
        elif t is cst.Global or t is cst.Nonlocal:
            for n in s.names:
                ctx.func.globals_declared.add(n.name.value)
                if t is cst.Nonlocal:
                    ctx.func.nonlocals.add(n.name.value)
        # Pass / Break / Continue: nothing to record
        self.seqs[s] = out

    def import_stmt(self, s: cst.Import | cst.ImportFrom, ctx: "_Ctx") -> None:
        if not ctx.func.is_module:
            self.imports.add(s)
        if self._in_fallback and not isinstance(s.names, cst.ImportStar):
            self.fallback_imports.update(id(a) for a in s.names)
        if isinstance(s, cst.Import):
            for alias in s.names:
                full = N.module_name(alias.name)
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    local, qual = alias.asname.name.value, full
                else:
                    local = qual = full.split(".", 1)[0]
                ctx.func.assigned.add(local)
                self._binding(local, "import", alias, None, ctx, qual=qual)
            return
        if isinstance(s.names, cst.ImportStar):
            return
        base = ("." * len(s.relative)) + N.module_name(s.module)
        for alias in s.names:
            local = alias.asname.name.value if alias.asname is not None and isinstance(alias.asname.name, cst.Name) else N.module_name(alias.name)
            ctx.func.assigned.add(local)
            sep = "" if base.endswith(".") else "."
            self._binding(local, "import", alias, None, ctx, qual=f"{base}{sep}{N.module_name(alias.name)}")
        if s.relative:
            return
        for alias in s.names:
            qual = f"{base}.{N.module_name(alias.name)}"
            if N.is_deprecated_amp(qual) or (base in ("torch.cuda", "torch.cpu") and N.module_name(alias.name) == "amp"):
                self.refs.append(Reference(alias, qual, ctx.stmt, ctx.func, "import"))

    def function(self, s: cst.FunctionDef, ctx: "_Ctx") -> None:
        parent = ctx.func
        cls = ctx.cls
        qualname = f"{cls.name}.{s.name.value}" if cls is not None else (
            s.name.value if parent.is_module else f"{parent.qualname}.{s.name.value}"
        )
        info = FunctionInfo(node=s, name=s.name.value, qualname=qualname, cls=cls, parent=parent)
        if cls is None:
            parent.assigned.add(s.name.value)
        self._binding(s.name.value, "def", s, None, ctx, cls=cls if ctx.class_body else None)
        regions: list[Region] = []
        decorators: list[str | None] = []
        dctx = ctx.at(s)
        for d in s.decorators:
            self.expr(d.decorator, dctx, [], kind="decorator")
            dec = d.decorator
            callee = dec.func if isinstance(dec, cst.Call) else dec
            qual = self.imports.qualify(callee) or dotted_text(callee)
            decorators.append(qual)
            if qual in ("staticmethod",):
                info.is_static = True
            elif qual in ("classmethod",):
                info.is_classmethod = True
            region = self.region_of(dec, dctx, decorator=True)
            if region is not None:
                self.regions.append(region)
                regions.append(region)
        if self._is_eval_name(s.name.value):
            region = Region("eval_name", node=s.name, target=None)
            self.regions.append(region)
            regions.append(region)
        info.regions = tuple(regions)
        info.decorators = tuple(decorators)
        p = s.params
        for param in list(p.posonly_params) + list(p.params):
            self._param(info, param)
        if isinstance(p.star_arg, cst.Param):
            self._param(info, p.star_arg)
            info.star_params.add(p.star_arg.name.value)
        for param in p.kwonly_params:
            self._param(info, param)
            info.kwonly.add(param.name.value)
        if p.star_kwarg is not None:
            self._param(info, p.star_kwarg)
            info.star_params.add(p.star_kwarg.name.value)
        for param in list(p.posonly_params) + list(p.params) + list(p.kwonly_params):
            if param.default is not None:
                self.expr(param.default, dctx, [])
        if s.returns is not None:
            self.expr(s.returns.annotation, dctx, [])
        if cls is not None and ctx.func is parent and _is_class_body(ctx):
            cls.methods[info.name] = info
        else:
            parent.local_defs[info.name] = info
        self.functions.append(info)
        owner = cls if cls is not None else ctx.owner_cls
        inner = _Ctx(func=info, cls=None, regions=tuple(regions), loops=(), stmt=s, lam=False, owner_cls=owner)
        self.block(_block_body(s.body), inner, s)

    def _param(self, info: FunctionInfo, param: cst.Param) -> None:
        name = param.name.value
        info.params.append(name)
        ann = None
        pctx = _Ctx(info, None, (), (), param, False)
        if param.annotation is not None:
            ann = self._annotation_qual(param.annotation.annotation)
            self.expr(param.annotation.annotation, pctx, [])
        info.param_annotations[name] = ann
        self._binding(name, "param", param.name, None, pctx,
                      annotation=param.annotation.annotation if param.annotation is not None else None,
                      default=param.default)

    def _annotation_qual(self, node: cst.BaseExpression) -> str | None:
        """The GradScaler-ish name an annotation mentions (``Optional[GradScaler]``, ``"GradScaler"``)."""
        found: list[str] = []

        def visit(n: cst.CSTNode) -> None:
            if isinstance(n, (cst.Name, cst.Attribute)):
                text = dotted_text(n)  # type: ignore[arg-type]
                if text is not None:
                    found.append(self.imports.resolve(text) or text)
                    return
            if isinstance(n, cst.SimpleString):
                for m in _STRING_NAME.findall(n.value[1:-1] if len(n.value) >= 2 else ""):
                    found.append(self.imports.resolve(m) or m)
                return
            for name in child_fields(type(n)):
                v = getattr(n, name)
                if isinstance(v, cst.CSTNode):
                    visit(v)
                elif isinstance(v, (list, tuple)):
                    for x in v:
                        if isinstance(x, cst.CSTNode):
                            visit(x)

        visit(node)
        for q in found:
            if N.is_grad_scaler_ctor(q):
                return q
        return found[0] if found else None

    def klass(self, s: cst.ClassDef, ctx: "_Ctx") -> None:
        bases = []
        quals = []
        cctx = ctx.at(s)
        for arg in s.bases:
            self.expr(arg.value, cctx, [])
            text = dotted_text(arg.value)
            bases.append(text or "")
            quals.append(self.imports.resolve(text))
        for d in s.decorators:
            self.expr(d.decorator, cctx, [], kind="decorator")
        info = ClassInfo(node=s, name=s.name.value, bases=tuple(bases), base_quals=tuple(quals), parent=ctx.owner_cls)
        ctx.func.assigned.add(s.name.value)
        self._binding(s.name.value, "class", s, None, ctx)
        self.classes.append(info)
        inner = _Ctx(func=ctx.func, cls=info, regions=(), loops=(), stmt=s, lam=False, owner_cls=info, class_body=True)
        self.block(_block_body(s.body), inner, s)

    # --- expressions ---------------------------------------------------------------

    def seq(self, node: cst.BaseExpression, ctx: "_Ctx") -> list[Item]:
        out: list[Item] = []
        self.expr(node, ctx, out)
        return out

    def expr(self, node: cst.CSTNode, ctx: "_Ctx", out: list[Item], kind: str = "expr") -> None:
        t = type(node)
        if t is cst.Call:
            self.call(node, ctx, out, kind)
        elif t is cst.Name:
            self.value_texts.setdefault(ctx.func, set()).add(node.value)
            q = self.imports.names.get(node.value)
            if q is not None and N.is_deprecated_amp(q):
                self.refs.append(Reference(node, q, ctx.stmt, ctx.func, kind))
        elif t is cst.Attribute:
            text = dotted_text(node)
            if text is None:
                self.expr(node.value, ctx, out)
            else:
                self.value_texts.setdefault(ctx.func, set()).add(text)
                self._maybe_ref(node, text, ctx, kind)
        elif t in _LEAF_TYPES:
            return
        elif t is cst.IfExp:
            self.tests.append(node.test)
            self.test_funcs[node.test] = ctx.func
            self.expr(node.test, ctx, out)
            a: list[Item] = []
            b: list[Item] = []
            self.arms_of[id(node)] = 2
            self.expr(node.body, ctx.arm(node, node.test, 0), a)
            self.expr(node.orelse, ctx.arm(node, node.test, 1), b)
            if a or b:
                out.append(Alt(node.test, a, b))
        elif t is cst.BooleanOperation:
            self.expr(node.left, ctx, out)
            r: list[Item] = []
            self.expr(node.right, ctx, r)
            if r:
                out.append(Alt(None, r, []))
        elif t is cst.Lambda:
            self.expr(node.body, ctx.lambda_(), [])
        elif t is cst.NamedExpr:
            self.expr(node.value, ctx, out)
            if isinstance(node.target, cst.Name):
                ctx.func.assigned.add(node.target.value)
            self.bind(node.target, node.value, "walrus", ctx)
            out.append(Bind(node))
        else:
            self.generic(node, ctx, out, kind)

    def generic(self, node: cst.CSTNode, ctx: "_Ctx", out: list[Item], kind: str = "expr") -> None:
        kinds = _KIND
        for name in child_fields(type(node)):
            v = getattr(node, name)
            k = kinds.get(type(v)) or _kind(type(v))
            if k == 1:
                self.expr(v, ctx, out, kind)
            elif k == 3:
                for x in v:
                    if (kinds.get(type(x)) or _kind(type(x))) == 1:
                        self.expr(x, ctx, out, kind)

    def _maybe_ref(self, node: cst.CSTNode, text: str, ctx: "_Ctx", kind: str) -> None:
        head = text.split(".", 1)[0]
        if head not in self.imports.names:
            return
        q = self.imports.resolve(text)
        if q is not None and N.is_deprecated_amp(q):
            self.refs.append(Reference(node, q, ctx.stmt, ctx.func, kind))

    def call(self, node: cst.Call, ctx: "_Ctx", out: list[Item], kind: str = "expr") -> None:
        func = node.func
        text: str | None = None
        recv: str | None = None
        method: str | None = None
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            text = dotted_text(func)
            if text is None:
                self.expr(func.value, ctx, out)
                recv = expr_key(func.value)
            else:
                recv = text.rsplit(".", 1)[0]
                self._maybe_ref(func, text, ctx, kind)
        elif isinstance(func, cst.Name):
            text = func.value
            q = self.imports.names.get(text)
            if q is not None and N.is_deprecated_amp(q):
                self.refs.append(Reference(func, q, ctx.stmt, ctx.func, kind))
        else:
            self.expr(func, ctx, out)
        if isinstance(func, cst.Attribute):
            self.parent_call[func.value] = node
        for arg in node.args:
            self.parent_call[arg.value] = node
            self.expr(arg.value, ctx, out)
        qual = self.imports.resolve(text) if text is not None else None
        if qual is None and method is None and text is not None and self.call_partials:
            qual = self._lookup(self.call_partials, text, ctx)
        if method is None and text is not None and self.method_aliases and not any(a.star for a in node.args):
            alias = self._lookup(self.method_aliases, text, ctx)
            if alias is not None and alias[0] is not None:
                bound, fixed = alias
                stand_in = cst.Call(func=bound, args=tuple(fixed) + tuple(node.args))
                self.stand_ins[stand_in] = node
                recv = dotted_text(bound.value)
                text, method = f"{recv}.{bound.attr.value}", bound.attr.value
                node = stand_in
        cs = CallSite(
            node=node,
            func=ctx.func,
            stmt=ctx.stmt,
            text=text,
            qual=qual,
            recv=recv,
            method=method,
            regions=ctx.regions,
            loops=ctx.loops,
            in_lambda=ctx.lam,
            arms=ctx.arms,
            order=self._next_order(),
        )
        for owner, _test, i in ctx.arms:
            self.arm_calls.setdefault((id(owner), i), []).append(node)
        for test in ctx.guards:
            self.guarded_calls.setdefault(test, []).append(cs)
        self.calls.append(cs)
        ctx.func.calls.append(cs)
        for r in ctx.regions:
            r.calls.append(cs)
        out.append(cs)

    def assign_target(self, target: cst.CSTNode, ctx: "_Ctx", out: list[Item] | None = None) -> None:
        if isinstance(target, cst.Name):
            ctx.func.assigned.add(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for el in target.elements:
                self.assign_target(el.value, ctx, out)
        elif isinstance(target, cst.StarredElement):
            self.assign_target(target.value, ctx, out)
        elif isinstance(target, cst.Attribute):
            if dotted_text(target) is None:
                self.expr(target.value, ctx, out if out is not None else [])
        elif isinstance(target, cst.Subscript):
            self.expr(target, ctx, out if out is not None else [])

    def bind(self, target: cst.CSTNode, value: cst.BaseExpression | None, kind: str, ctx: "_Ctx",
             annotation: cst.BaseExpression | None = None, unpack: tuple[int, ...] = ()) -> None:
        """Record the bindings a target makes (names, dotted targets, container items), unpacking
        tuples: a literal tuple/list value gives each element its own value."""
        if isinstance(target, (cst.Tuple, cst.List)):
            elems = target.elements
            lit = value.elements if isinstance(value, (cst.Tuple, cst.List)) and not unpack else None
            if lit is not None and (len(lit) != len(elems) or any(isinstance(e, cst.StarredElement) for e in lit)):
                lit = None
            for i, el in enumerate(elems):
                star = isinstance(el, cst.StarredElement)
                inner = el.value
                if lit is not None and not star:
                    self.bind(inner, lit[i].value, kind, ctx)
                else:
                    self.bind(inner, value, kind, ctx, unpack=unpack + ((-1,) if star else (i,)))
            return
        if isinstance(target, cst.StarredElement):
            self.bind(target.value, value, kind, ctx, unpack=unpack + (-1,))
            return
        if isinstance(target, cst.Subscript):
            base = expr_key(target.value)
            if base is None:
                return
            key = None
            if len(target.slice) == 1 and isinstance(target.slice[0].slice, cst.Index):
                k = literal_value(target.slice[0].slice.value)
                key = k if isinstance(k, (str, int)) and not isinstance(k, bool) else None
            self._binding(base, "item" if kind != "del" else "del", target, value, ctx, unpack=unpack, key=key)
            return
        name = expr_key(target) if isinstance(target, (cst.Name, cst.Attribute)) else None
        if name is not None:
            self._binding(name, kind, target, value, ctx, unpack=unpack, annotation=annotation,
                          cls=ctx.cls if ctx.class_body else None)

    def _next_order(self) -> int:
        """One counter for calls and bindings: their source (evaluation) order."""
        self._order += 1
        return self._order

    def _binding(self, name: str, kind: str, node, value, ctx: "_Ctx", **kw) -> None:
        self.bindings.append(Binding(name, kind, node, value, ctx.func, ctx.stmt, self._next_order(), loops=ctx.loops,
                                     arms=ctx.arms, regions=ctx.regions, **kw))

    # --- regions -------------------------------------------------------------------

    def region_of(self, node: cst.BaseExpression, ctx: "_Ctx", decorator: bool = False) -> Region | None:
        if isinstance(node, cst.IfExp):
            return _either_region(self.region_of(node.body, ctx), self.region_of(node.orelse, ctx))
        if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Dict):
            # ``with {"bf16": autocast(dtype=bf16), "fp16": autocast(dtype=fp16), "fp32":
            # nullcontext()}[args.precision]:``: one of the options, float16 when one is
            options = [self.region_of(el.value, ctx) for el in node.value.elements if isinstance(el, cst.DictElement)]
            casts = [r for r in options if r is not None and r.kind == "autocast"]
            if not casts:
                return None
            pick = next((r for r in casts if r.dtype == "float16"), casts[0])
            if len(casts) < len(options) or any(r.dtype != pick.dtype for r in casts):
                pick.enabled = None if pick.enabled is not False else False
            return pick
        if isinstance(node, cst.Call):
            qual = self.imports.qualify(node.func)
            if qual is None:
                text = dotted_text(node.func)
                if text is not None:
                    partial = self._lookup(self.region_partials, text, ctx)
                    if partial is not None:
                        return self._region_from_call(partial, self.imports.qualify(partial.args[0].value), node, skip=1)
                    factory = self._lookup(self.region_factories, text, ctx)
                    if factory is not None and not node.args:
                        return self._factory_region(factory, ctx)
                return None
            return self._region_from_call(node, qual, node)
        if isinstance(node, (cst.Name, cst.Attribute)):
            text = dotted_text(node)
            if text is None:
                return None
            qual = self.imports.resolve(text)
            if decorator:
                return Region("no_grad", node=node) if qual in N.NO_GRAD else None
            bound = self._lookup(self.region_vars, text, ctx)
            if bound is not None:
                return self.region_of(bound, ctx)
        return None

    def _factory_region(self, expr: cst.BaseExpression, ctx: "_Ctx") -> Region | None:
        """The region a call of ``expr`` enters: ``lambda: torch.autocast(...)``, or either arm of
        ``(lambda: torch.autocast(...)) if args.amp else contextlib.nullcontext``."""
        if isinstance(expr, cst.Lambda):
            return self.region_of(expr.body, ctx)
        if isinstance(expr, cst.IfExp):
            return _either_region(self._factory_region(expr.body, ctx), self._factory_region(expr.orelse, ctx))
        return None

    def _region_from_call(self, call: cst.Call, qual: str | None, node: cst.CSTNode, skip: int = 0) -> Region | None:
        if qual is None:
            return None
        args = list(call.args[skip:])
        if qual in N.AUTOCAST:
            return autocast_region(qual, args, node, self.imports)
        if qual in N.NO_GRAD:
            if qual.endswith("inference_mode"):
                mode = _arg_value(args, 0, "mode")
                if mode is False:
                    return None
            return Region("no_grad", node=node)
        if qual in N.SET_GRAD_ENABLED:
            mode = _arg_value(args, 0, "mode")
            if mode is False:
                return Region("no_grad", node=node)
            if mode is True:
                return Region("enable_grad", node=node)
            return None
        if qual in N.ENABLE_GRAD:
            return Region("enable_grad", node=node)
        return None

    def _note_region_var(self, targets: list[str | None], value: cst.BaseExpression | None, ctx: "_Ctx") -> None:
        if value is None:
            return
        key_scope = _scope_id(ctx)
        self._note_method_alias(targets, value, key_scope)
        if isinstance(value, cst.Call):
            callee = self.imports.qualify(value.func) or dotted_text(value.func)
            if callee in ("functools.partial", "partial") and value.args:
                inner = self.imports.qualify(value.args[0].value)
                if inner in N.AUTOCAST:
                    for t in targets:
                        if t is not None:
                            self.region_partials[(key_scope(t), t)] = value
                    return
                if inner is not None and inner.startswith("torch.") and all(a.keyword is not None for a in value.args[1:]):
                    for t in targets:
                        if t is not None and "." not in t:
                            self.call_partials[(key_scope(t), t)] = inner
        probe = value.body if isinstance(value, cst.IfExp) else value
        alt = value.orelse if isinstance(value, cst.IfExp) else None
        regions = N.AUTOCAST | N.NO_GRAD | N.SET_GRAD_ENABLED
        if any(isinstance(c, cst.Lambda) and not c.params.params and isinstance(c.body, cst.Call)
               and self.imports.qualify(c.body.func) in regions for c in (probe, alt)):
            # ``amp_ctx = (lambda: torch.autocast(...)) if args.amp else nullcontext``
            for t in targets:
                if t is not None:
                    self.region_factories[(key_scope(t), t)] = value
            return
        for cand in (probe, alt):
            if isinstance(cand, cst.Call) and self.imports.qualify(cand.func) in (N.AUTOCAST | N.NO_GRAD | N.SET_GRAD_ENABLED):
                for t in targets:
                    if t is not None:
                        self.region_vars[(key_scope(t), t)] = value
                return

    def _note_method_alias(self, targets: list[str | None], value, key_scope) -> None:
        bound, fixed = None, ()
        if isinstance(value, cst.Attribute):
            bound = value
        elif (isinstance(value, cst.Call) and value.args and isinstance(value.args[0].value, cst.Attribute)
              and (self.imports.qualify(value.func) or dotted_text(value.func)) in ("functools.partial", "partial")
              and all(a.keyword is None and not a.star for a in value.args[1:])):
            bound, fixed = value.args[0].value, tuple(value.args[1:])
        recv = dotted_text(bound.value) if bound is not None else None
        # ``scaler.step`` needs its optimizer: a bare ``X.step`` is a scaler's only by its name
        # (``do_step = optimizer.step`` is the fp32 arm)
        alias = (recv is not None and bound.attr.value in _ALIASED_METHODS  # type: ignore[union-attr]
                 and (bound.attr.value != "step" or bool(fixed) or "scaler" in recv.rsplit(".", 1)[-1].lower()))  # type: ignore[union-attr]
        plain_step = not alias and isinstance(value, cst.Attribute) and value.attr.value == "step"
        for t in targets:
            if t is None or "." in t:
                continue
            key = (key_scope(t), t)
            if key not in self.method_aliases:
                if alias:
                    self.method_aliases[key] = (bound, fixed)
                elif plain_step:
                    self.method_aliases[key] = (None, ())  # ``opt.step`` first: an alias may follow
                continue
            have = self.method_aliases[key]
            if have is None or plain_step:
                continue  # poisoned stays so; the optimizer's own step is the fp32 arm
            if alias and (have[0] is None or dotted_text(have[0]) == dotted_text(bound)):
                self.method_aliases[key] = (bound, fixed)
            else:
                self.method_aliases[key] = None  # bound to something else too

    def _lookup(self, table: dict, text: str, ctx: "_Ctx"):
        scope = _scope_id(ctx)(text)
        hit = table.get((scope, text))
        if hit is None:
            hit = table.get((0, text))
        return hit

    def _is_eval_name(self, name: str) -> bool:
        return any(fnmatch.fnmatchcase(name, p) for p in self.eval_patterns)


def _either_region(a: Region | None, b: Region | None) -> Region | None:
    """The region of ``a if cond else b``: an autocast against no region is a conditional
    autocast; two regions of one kind are that kind."""
    if a is not None and b is None and a.kind == "autocast":
        a.enabled = None if a.enabled is not False else False
        return a
    if b is not None and a is None and b.kind == "autocast":
        b.enabled = None if b.enabled is not False else False
        return b
    return a if a is not None and b is not None and a.kind == b.kind else None


def autocast_region(qual: str, args: list[cst.Arg], node: cst.CSTNode, imports: ImportTable) -> Region:
    """Region for an autocast call; deprecated spellings have a different positional order."""
    if qual.startswith(("torch.cuda.amp.", "torch.cpu.amp.")):
        device = "cuda" if qual.startswith("torch.cuda.") else "cpu"
        enabled_node = _arg_node(args, 0, "enabled")
        dtype_node = _arg_node(args, 1, "dtype")
    else:
        dev_node = _arg_node(args, 0, "device_type")
        dv = literal_value(dev_node)
        device = dv if isinstance(dv, str) else ("" if dev_node is not None else None)
        dtype_node = _arg_node(args, 1, "dtype")
        enabled_node = _arg_node(args, 2, "enabled")
    ev = literal_value(enabled_node) if enabled_node is not None else True
    enabled = ev if isinstance(ev, bool) else None
    return Region("autocast", node=node, device=device, dtype=dtype_kind(dtype_node, imports), enabled=enabled)


def dtype_kind(node: cst.BaseExpression | None, imports: ImportTable) -> str | None:
    if node is None:
        return None
    v = literal_value(node)
    if v is None:
        return None
    from ..torch_api import dtype_kind as kind_of

    return kind_of(imports.qualify(node)) or "unknown"  # type: ignore[arg-type]


def _arg_node(args: list[cst.Arg], index: int, name: str) -> cst.BaseExpression | None:
    for a in args:
        if a.keyword is not None and a.keyword.value == name:
            return a.value
    pos = [a for a in args if a.keyword is None and not a.star]
    if index < len(pos):
        return pos[index].value
    return None


def _arg_value(args: list[cst.Arg], index: int, name: str) -> object:
    node = _arg_node(args, index, name)
    if node is None:
        return True if name == "mode" else NOT_LITERAL
    return literal_value(node)


def _block_body(node: cst.CSTNode) -> list[cst.CSTNode]:
    if isinstance(node, cst.IndentedBlock):
        return list(node.body)
    if isinstance(node, cst.SimpleStatementSuite):
        return [node]
    body = getattr(node, "body", None)
    if isinstance(body, cst.IndentedBlock):
        return list(body.body)
    if isinstance(body, cst.SimpleStatementSuite):
        return [body]
    if isinstance(body, (list, tuple)):
        return list(body)
    return []


#: names of models that are kept in eval mode while another one trains
_FROZEN_WORDS = re.compile(r"teacher|(?:^|_)(?:ema|frozen|target|target_net|reference|ref)(?:_|\d|$)", re.I)


def _eval_toggle(s: cst.CSTNode) -> tuple[str, str | None, cst.Call] | None:
    """``<m>.eval()`` / ``<m>.train(False)`` -> ("eval", m); ``<m>.train()`` -> ("train", m)."""
    if not isinstance(s, cst.SimpleStatementLine):
        return None
    result = None
    for small in s.body:
        value = None
        if isinstance(small, cst.Expr):
            value = small.value
        elif isinstance(small, cst.Assign):
            value = small.value
        if not isinstance(value, cst.Call) or not isinstance(value.func, cst.Attribute):
            continue
        attr = value.func.attr.value
        target = expr_key(value.func.value)
        if target is None and not isinstance(value.func.value, cst.Call):
            continue
        named = [target] + ([expr_key(t.target) for t in small.targets] if isinstance(small, cst.Assign) else [])
        if any(n is not None and _FROZEN_WORDS.search(n.rsplit(".", 1)[-1]) for n in named):
            continue  # ``teacher = teacher.half().eval()``: a frozen model set up, no evaluation phase
        if attr == "eval" and not value.args:
            result = ("eval", target, value)
        elif attr == "train":
            mode = _arg_value(list(value.args), 0, "mode")
            if mode is False:
                result = ("eval", target, value)
            else:
                result = ("train", target, value)
    return result


def _is_class_body(ctx: "_Ctx") -> bool:
    return ctx.class_body


def _scope_id(ctx: "_Ctx"):
    """Variables holding regions: ``self.x`` is class-wide, other names are per function."""

    def scope(text: str) -> int:
        if text.startswith("self.") and ctx.owner_cls is not None:
            return id(ctx.owner_cls)
        if ctx.func.is_module:
            return 0
        return id(ctx.func)

    return scope


class _Ctx:
    __slots__ = ("func", "cls", "regions", "loops", "stmt", "lam", "owner_cls", "class_body", "arms", "guards")

    def __init__(self, func, cls, regions, loops, stmt, lam, owner_cls=None, class_body=False, arms=(), guards=()):
        self.func = func
        self.cls = cls
        self.regions = regions
        self.loops = loops
        self.stmt = stmt
        self.lam = lam
        self.owner_cls = owner_cls if owner_cls is not None else cls
        self.class_body = class_body
        self.arms = arms
        self.guards = guards

    def _copy(self, **kw) -> "_Ctx":
        c = _Ctx(self.func, self.cls, self.regions, self.loops, self.stmt, self.lam, self.owner_cls, self.class_body,
                 self.arms, self.guards)
        for k, v in kw.items():
            setattr(c, k, v)
        return c

    def at(self, stmt: cst.CSTNode) -> "_Ctx":
        return self._copy(stmt=stmt)

    def push(self, region: Region) -> "_Ctx":
        return self._copy(regions=self.regions + (region,))

    def loop(self, node: cst.CSTNode) -> "_Ctx":
        return self._copy(loops=self.loops + (node,))

    def lambda_(self) -> "_Ctx":
        return self._copy(lam=True)

    def arm(self, owner: cst.CSTNode, test: cst.CSTNode, index: int) -> "_Ctx":
        """Inside arm ``index`` of the branch ``owner`` (if / conditional expression / match)."""
        guards = self.guards if isinstance(owner, cst.Match) else self.guards + (test,)
        return self._copy(arms=self.arms + ((owner, test, index),), guards=guards)

    def guard(self, test: cst.CSTNode) -> "_Ctx":
        return self._copy(guards=self.guards + (test,))


def _catches_import_error(h: cst.ExceptHandler) -> int:
    """1 when the handler catches ImportError (or ModuleNotFoundError, alone or in a tuple)."""
    t = h.type
    names = t.elements if isinstance(t, cst.Tuple) else [t] if t is not None else []
    for e in names:
        v = e.value if isinstance(e, cst.Element) else e
        if isinstance(v, (cst.Name, cst.Attribute)) and (dotted_text(v) or "").rsplit(".", 1)[-1] in (
                "ImportError", "ModuleNotFoundError"):
            return 1
    return 0
