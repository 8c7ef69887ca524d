"""Facts shared by the autocast rules (AMP101-AMP106).

- which deprecated ``torch.cuda.amp`` / ``torch.cpu.amp`` names exist and what replaces them;
- the autocast region a call really runs under (the innermost one decides);
- a lazily built view of the tree that the model does not keep: parents, absolute
  indentation of statements, every ``Name`` occurrence and every import binding.

The tree view is built on first use only (a rule asks for it when it has a candidate
finding), so files without deprecated names or autocast misuse never pay for it.
"""

from __future__ import annotations

import re
from typing import Iterable

import libcst as cst

from . import names as N
from .syntax import child_fields, literal_value
from .names import dotted_text
from .structure import FunctionInfo, Reference, Region

# --- the deprecated namespaces --------------------------------------------------------

from .. import torch_api as T  # noqa: E402

#: qualified deprecated name -> (device, symbol)
DEPRECATED: dict[str, tuple[str, str]] = {q: (d.device, d.symbol) for q, d in T.DEPRECATED.items()}
NEW_AUTOCAST = T.NEW_AUTOCAST
NEW_CUSTOM_FWD = T.NEW_CUSTOM_FWD
NEW_CUSTOM_BWD = T.NEW_CUSTOM_BWD
DEPRECATED_AUTOCAST = T.DEPRECATED_AUTOCAST
#: positional parameters of the deprecated constructors (the device comes from the namespace)
OLD_PARAMS = T.OLD_PARAMS
DEVICE_TYPES = T.DEVICE_TYPES

VERSION_TEST = re.compile(r"version|torch_\d|greater|less_than|hasattr", re.I)
_COMPAT_EXCEPTIONS = {"ImportError", "ModuleNotFoundError", "AttributeError", "Exception", "TypeError", "BaseException"}


def deprecated_symbol(qual: str | None) -> tuple[str, str, bool] | None:
    """``(device, symbol, exact)`` for a deprecated AMP name; ``exact`` is False for an
    attribute of one (``torch.cuda.amp.GradScaler.unscale_``)."""
    hit = T.deprecation(qual)
    if hit is None:
        return None
    dep, exact = hit
    return dep.device, dep.symbol, exact


def replacement(sym: str, dev: str) -> str:
    return T.Deprecation(sym, dev).replacement


# --- regions ----------------------------------------------------------------------------


def innermost_autocast(regions: Iterable[Region]) -> Region | None:
    last = None
    for r in regions:
        if r.kind == "autocast":
            last = r
    return last


def intended(model, r: Region) -> tuple[str | None, str | None, bool | None]:
    """``(device, dtype, enabled)`` of an autocast region as its author meant it.

    Two argument mistakes that AMP102 reports (and fixes) are read the way the fix will
    write them, so that fixing AMP102 never changes what the other rules see:
    ``torch.autocast(torch.device("cuda"))`` is device ``"cuda"`` and
    ``torch.autocast("cuda", False)`` is ``enabled=False``.
    """
    device, dtype, enabled = r.device, r.dtype, r.enabled
    node = r.node
    if isinstance(node, cst.Call) and not has_star(node):
        dev = arg_node(node, 0, "device_type")
        if dev is not None and isinstance(dev.value, cst.Call) and len(dev.value.args) >= 1:
            first = literal_value(dev.value.args[0].value)
            if qual_of(model, dev.value.func) == "torch.device" and isinstance(first, str):
                device = first.split(":", 1)[0]
        pos = [a for a in node.args if a.keyword is None]
        if (
            len(pos) == 2
            and isinstance(literal_value(pos[1].value), bool)
            and arg_node(node, 99, "enabled") is None
            and qual_of(model, node.func) in NEW_AUTOCAST
        ):
            dtype, enabled = None, bool(literal_value(pos[1].value))
    return device, dtype, enabled


def autocast_on(model, r: Region | None) -> bool:
    """The region really autocasts (enabled not literally False, dtype not an unsupported one)."""
    if r is None:
        return False
    _device, dtype, enabled = intended(model, r)
    return enabled is not False and dtype != "other"


def device_is_cuda_or_unknown(model, r: Region) -> bool:
    return intended(model, r)[0] in ("cuda", "")


def possible_devices(model, r: Region) -> frozenset[str]:
    """The device types an autocast region whose ``device_type`` is not a literal can run on, as
    far as the file's bindings tell (``"?"``: something else too): ``str(device)``,
    ``device.type``, ``torch.device(...)``, ``"cuda" if torch.cuda.is_available() else "cpu"``,
    a config lookup's default (``cfg.get("device", "cuda")``), through names bound in the file."""
    node = r.node
    site = model.call_of.get(node) if isinstance(node, cst.Call) else None
    dev = arg_node(node, 0, "device_type") if isinstance(node, cst.Call) and not has_star(node) else None
    if site is None or dev is None:
        return frozenset({"?"})
    out: set[str] = set()
    _devices(model, site.func, dev.value, out, 0, set())
    return frozenset(out)


def _devices(model, func, e, out: set[str], depth: int, seen: set) -> None:
    if depth > 6 or id(e) in seen:
        out.add("?")
        return
    seen.add(id(e))
    v = literal_value(e)
    if isinstance(v, str):
        out.add(v.split(":", 1)[0])
    elif isinstance(e, cst.IfExp):
        _devices(model, func, e.body, out, depth + 1, seen)
        _devices(model, func, e.orelse, out, depth + 1, seen)
    elif isinstance(e, cst.Attribute) and e.attr.value == "type":
        _devices(model, func, e.value, out, depth + 1, seen)
    elif isinstance(e, cst.Call) and e.args and not has_star(e):
        q = qual_of(model, e.func) or (e.func.value if isinstance(e.func, cst.Name) else None)
        if q in ("str", "torch.device") and e.args[0].keyword is None:
            _devices(model, func, e.args[0].value, out, depth + 1, seen)
        elif isinstance(e.func, cst.Attribute) and e.func.attr.value == "get" and len(e.args) == 2:
            out.add("?")  # a lookup: its default, or whatever the mapping holds
            _devices(model, func, e.args[1].value, out, depth + 1, seen)
        else:
            out.add("?")
    elif isinstance(e, (cst.Name, cst.Attribute)):
        # (``self.autocast_device_type``: the attribute's bindings in the class's methods)
        key = e.value if isinstance(e, cst.Name) else dotted_text(e)
        bindings = (model.scopes.lookup(func, key) if isinstance(e, cst.Name)
                    else model.values.bindings_of_key(func, key) if key is not None else [])
        if not bindings:
            out.add("?")
        for b in bindings:
            if b.kind in ("assign", "ann") and b.value is not None and not b.unpack:
                _devices(model, b.func, b.value, out, depth + 1, seen)
            else:
                out.add("?")
    else:
        out.add("?")


def effective_dtype(model, r: Region) -> str | None:
    """The dtype the region autocasts to: the explicit one, else the device's default."""
    device, dtype, _enabled = intended(model, r)
    if dtype is not None:
        return dtype
    return T.default_autocast_dtype(device)


# --- the tree view ----------------------------------------------------------------------


class TreeView:
    """Parents, statement indentation, ``Name`` occurrences and import bindings of a module."""

    def __init__(self, module: cst.Module) -> None:
        self.module = module
        self.parent: dict[int, cst.CSTNode] = {}
        self.indent: dict[int, str] = {}
        self.names: dict[str, list[cst.Name]] = {}
        # local name -> [(qualified name, ImportAlias, Import/ImportFrom)]
        self.bindings: dict[str, list[tuple[str, cst.ImportAlias, cst.CSTNode]]] = {}
        self.top_index: dict[int, int] = {}  # id(node) -> index of its top-level statement
        self.order: dict[int, int] = {}  # id(node) -> preorder position (source order of statements)
        self._walk()

    def _walk(self) -> None:
        default = self.module.default_indent
        stack: list[tuple[cst.CSTNode, str, int]] = []
        for i, s in reversed(list(enumerate(self.module.body))):
            self.parent[id(s)] = self.module
            stack.append((s, "", i))
        counter = 0
        while stack:
            node, indent, top = stack.pop()
            self.top_index[id(node)] = top
            self.order[id(node)] = counter
            counter += 1
            if isinstance(node, (cst.BaseCompoundStatement, cst.SimpleStatementLine)):
                self.indent[id(node)] = indent
            t = type(node)
            if t is cst.Name:
                self.names.setdefault(node.value, []).append(node)  # type: ignore[attr-defined]
            elif t is cst.Import or t is cst.ImportFrom:
                self._binding(node)  # type: ignore[arg-type]
            child_indent = indent
            if t is cst.IndentedBlock:
                child_indent = indent + (node.indent if node.indent is not None else default)  # type: ignore[attr-defined]
            children: list[cst.CSTNode] = []
            for name in child_fields(t):
                v = getattr(node, name)
                if isinstance(v, cst.CSTNode):
                    children.append(v)
                elif isinstance(v, (list, tuple)):
                    children.extend(x for x in v if isinstance(x, cst.CSTNode))
            for c in reversed(children):
                self.parent[id(c)] = node
                stack.append((c, child_indent, top))

    def _binding(self, s: cst.Import | cst.ImportFrom) -> None:
        if isinstance(s, cst.Import):
            for alias in s.names:
                full = N.module_name(alias.name)
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    self.bindings.setdefault(alias.asname.name.value, []).append((full, alias, s))
                else:
                    head = full.split(".", 1)[0]
                    self.bindings.setdefault(head, []).append((head, alias, s))
            return
        if s.relative or isinstance(s.names, cst.ImportStar):
            return
        base = N.module_name(s.module)
        for alias in s.names:
            name = N.module_name(alias.name)
            local = alias.asname.name.value if alias.asname is not None and isinstance(alias.asname.name, cst.Name) else name
            self.bindings.setdefault(local, []).append((f"{base}.{name}", alias, s))

    # --- queries ----------------------------------------------------------------------

    def parent_of(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.parent.get(id(node))

    def ancestors(self, node: cst.CSTNode) -> Iterable[tuple[cst.CSTNode, cst.CSTNode]]:
        """(ancestor, its child on the way to ``node``), innermost first."""
        child = node
        p = self.parent.get(id(child))
        while p is not None:
            yield p, child
            child = p
            p = self.parent.get(id(child))

    def import_quals(self, name: str) -> set[str]:
        return {q for q, _a, _s in self.bindings.get(name, ())}

    def torch_bound_before(self, node: cst.CSTNode) -> bool:
        """A top-level ``import torch`` (or ``import torch.x``) runs before ``node``'s top-level
        statement, so ``torch`` names the torch module there (unless shadowed)."""
        top = self.top_index.get(id(node))
        if top is None:
            return False
        for q, alias, stmt in self.bindings.get("torch", ()):
            if q != "torch" or not isinstance(stmt, cst.Import):
                return False  # ``torch`` is bound to something else somewhere
        for q, alias, stmt in self.bindings.get("torch", ()):
            i = self.top_index.get(id(stmt))
            if i is not None and i < top and self._is_top_level_stmt(stmt):
                return True
        return False

    def _is_top_level_stmt(self, small: cst.CSTNode) -> bool:
        line = self.parent.get(id(small))
        return line is not None and line in self.module.body

    def uses(self, name: str) -> list[cst.Name]:
        """Occurrences of identifier ``name`` as a variable (not ``x.name``, not ``f(name=...)``,
        not the name inside an import alias)."""
        out = []
        for n in self.names.get(name, ()):
            p = self.parent.get(id(n))
            if isinstance(p, cst.Attribute) and p.attr is n:
                continue
            if isinstance(p, cst.Arg) and p.keyword is n:
                continue
            if isinstance(p, cst.ImportAlias) or isinstance(p, cst.AsName) and isinstance(self.parent.get(id(p)), cst.ImportAlias):
                continue
            if isinstance(p, (cst.Attribute, cst.ImportFrom)) and self._inside_import(p):
                continue
            out.append(n)
        return out

    def _inside_import(self, node: cst.CSTNode) -> bool:
        for anc, _child in self.ancestors(node):
            if isinstance(anc, (cst.Import, cst.ImportFrom)):
                return True
            if isinstance(anc, cst.BaseStatement):
                return False
        return False


def tree(model) -> TreeView:
    view = getattr(model, "_autocast_tree", None)
    if view is None:
        view = TreeView(model.module)
        model._autocast_tree = view
    return view


# --- compatibility code -------------------------------------------------------------------


def is_compat_code(model, node: cst.CSTNode) -> bool:
    """``node`` sits in version-compatibility code: an ``except ImportError`` fallback, a branch
    of a torch-version test (or ``hasattr``), or the fallback after ``if <version test>: return``."""
    view = tree(model)
    for anc, child in view.ancestors(node):
        if isinstance(anc, cst.ExceptHandler):
            if anc.type is None or _handler_names(anc.type) & _COMPAT_EXCEPTIONS:
                return True
        elif isinstance(anc, (cst.If, cst.IfExp)):
            if child is anc.test:
                continue
            if VERSION_TEST.search(model.code_for(anc.test)):
                return True
        elif isinstance(anc, (cst.IndentedBlock, cst.Module)):
            # ``if <version test>: return <new API>`` followed by the old API
            for s in anc.body:
                if s is child:
                    break
                if isinstance(s, cst.If) and _returns(s.body) and VERSION_TEST.search(model.code_for(s.test)):
                    return True
    return False


def _returns(block: cst.BaseSuite) -> bool:
    body = block.body if isinstance(block, cst.IndentedBlock) else [block]
    if not body:
        return False
    last = body[-1]
    if isinstance(last, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
        return any(isinstance(x, (cst.Return, cst.Raise)) for x in last.body)
    return False


def _handler_names(node: cst.BaseExpression) -> set[str]:
    out = set()
    elements = node.elements if isinstance(node, cst.Tuple) else [node]  # type: ignore[attr-defined]
    for e in elements:
        v = e.value if isinstance(e, cst.Element) else e
        text = dotted_text(v) if isinstance(v, (cst.Name, cst.Attribute)) else None
        if text:
            out.add(text.rsplit(".", 1)[-1])
    return out


def shadowed(func: FunctionInfo | None, name: str) -> bool:
    """``name`` is a parameter of the function (or an enclosing one)."""
    f = func
    while f is not None:
        if name in f.params:
            return True
        f = f.parent
    return False


def ref_head(ref: Reference) -> str | None:
    node = ref.node
    if isinstance(node, cst.ImportAlias):
        return None
    text = dotted_text(node)  # type: ignore[arg-type]
    return text.split(".", 1)[0] if text else None


# --- small helpers on calls -------------------------------------------------------------


def arg_node(call: cst.Call, index: int, name: str) -> cst.Arg | None:
    for a in call.args:
        if a.keyword is not None and a.keyword.value == name:
            return a
    pos = [a for a in call.args if a.keyword is None and not a.star]
    return pos[index] if index < len(pos) else None


def has_star(call: cst.Call) -> bool:
    return any(a.star for a in call.args)


def qual_of(model, node: cst.BaseExpression) -> str | None:
    return model.imports.qualify(node) if isinstance(node, (cst.Name, cst.Attribute)) else None


# --- deprecated references (AMP101) --------------------------------------------------------------


def deprecated_references(model) -> list:
    """``(reference, device, symbol, exact)`` for every use of a deprecated AMP name that is a use:
    not shadowed by a parameter, not bound by several imports (a compatibility fallback), not
    in version-compatibility code, not an entry of a table or an operand of a comparison."""
    candidates = []
    for ref in model.refs:
        hit = deprecated_symbol(ref.qual)
        if hit is not None:
            candidates.append((ref, hit))
    if not candidates:
        return []
    view = tree(model)
    out = []
    for ref, (dev, sym, exact) in candidates:
        head = ref_head(ref)
        if head is not None and (shadowed(ref.func, head) or len(view.import_quals(head)) > 1):
            continue
        if is_compat_code(model, ref.node) or _mentioned_not_used(view, ref.node):
            continue
        out.append((ref, dev, sym, exact))
    return out


def _mentioned_not_used(view, node) -> bool:
    """The name is an entry of a table (a list, tuple, set or dict literal) or an operand of a
    comparison (``func in [...]``, ``value is torch.cuda.amp.autocast``): code that recognises
    the deprecated API (torch's own dynamo) rather than uses it. ``isinstance`` / ``issubclass``
    with a tuple of classes is a use: the deprecated subclass misses new-style objects."""
    parent = view.parent_of(node)
    if isinstance(parent, cst.ComparisonTarget) or (isinstance(parent, cst.Comparison) and parent.left is node):
        return True
    if isinstance(parent, (cst.DictElement, cst.StarredDictElement)):
        return True
    if isinstance(parent, cst.Element):
        container = view.parent_of(parent)
        if isinstance(container, (cst.List, cst.Tuple, cst.Set)):
            arg = view.parent_of(container)
            call = view.parent_of(arg) if isinstance(arg, cst.Arg) else None
            if isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value in ("isinstance", "issubclass"):
                return False
            return True
    return False
