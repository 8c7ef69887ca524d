"""Second-stage prefilter on CPython's AST, which the syntax gate has already built.

The byte prefilter keeps every file that mentions ``autocast``: in a code base like torch's
that is hundreds of large files, almost none of which can produce an autocast finding, and
LibCST parses 13x slower than CPython. One cheap pass over the AST answers the questions the
autocast rules depend on (is there an autocast region at all, and a backward or a BCE call
beside it; is any autocast call given a literal that could be wrong), and a rule whose
question is answered "no" is not run; when no rule is left, LibCST never parses the file.

Each predicate is a superset of its rule's condition (when in doubt it answers yes); the
prefilter soundness tests compare findings with and without both prefilter stages.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from . import torch_api as T
from .literals import _constant

_KNOWN_DEVICES = T.DEVICE_TYPES
_AMP_DTYPES = T.AUTOCAST_DTYPE_NAMES
_SLOTS = T.AUTOCAST_PARAMS
_ARG_KEYWORDS = frozenset(_SLOTS)
_SCALER_NAMES = tuple(sorted(T.SCALER_CLASS_NAMES))
_DEPRECATED = T.DEPRECATED_PREFIXES
_DEPRECATED_PARENTS = tuple(ns.rsplit(".", 1)[0] for ns in T.DEPRECATED_NAMESPACES)
_DEPRECATED_PARENTS_LAST = tuple(p.rsplit(".", 1)[-1] for p in _DEPRECATED_PARENTS)


@dataclass
class Facts:
    autocast_region: bool = False  # an autocast `with` item, decorator, or partial(autocast, ...)
    backward: bool = False  # a `.backward(...)` / `backward(...)` call
    bce: bool = False  # binary_cross_entropy (not with logits) or BCELoss
    suspicious_autocast_args: bool = False  # an autocast call or decorator AMP102 may reject
    custom_fwd: bool = False  # custom_fwd / custom_bwd mentioned
    deprecated_amp: bool = False  # torch.cuda.amp / torch.cpu.amp (whose autocast takes `enabled` first)
    scaler_evidence: bool = False  # what the model accepts as a GradScaler (see model/scalers.py)
    scale_call: bool = False  # some ``x.scale(...)`` call (with a backward: evidence by use)
    accumulate_block: bool = False  # a ``with x.accumulate(...)`` item (accelerate)
    accelerator_unscale: bool = False  # ``x.clip_grad_norm_(...)`` and the like (they unscale)
    longest_chain: int = 0  # the longest left-nested chain (``a + b + ...``, ``a.b.c...``, ``f()()...``)
    nodes: int = 0  # syntax nodes, a constant literal counted as one (a large one is blanked before LibCST)


_CONTAINERS = frozenset({ast.List, ast.Tuple, ast.Set, ast.Dict})


def _last(node: ast.AST) -> str:
    while isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return ""


def _mentions_autocast(node: ast.AST) -> bool:
    return any(
        (isinstance(n, ast.Attribute) and "autocast" in n.attr) or (isinstance(n, ast.Name) and "autocast" in n.id)
        for n in ast.walk(node)
    )


_SCALER_METHODS = T.SCALER_PROTOCOL - {"unscale_"}
_ACCELERATOR_UNSCALES = T.ACCELERATOR_UNSCALES
_CHAIN = {ast.BinOp: "left", ast.Attribute: "value", ast.Call: "func", ast.Subscript: "value"}
_SKIP = frozenset({"ctx", "type_comment", "kind"})
_FIELDS: dict[type, tuple[str, ...]] = {}


def _child_fields(t: type) -> tuple[str, ...]:
    fs = _FIELDS.get(t)
    if fs is None:
        fs = _FIELDS[t] = tuple(f for f in t._fields if f not in _SKIP)
    return fs


class _Walker:
    """One iterative pass over the tree (``ast.NodeVisitor`` dispatch costs several times more)."""

    def __init__(self, extra: frozenset[str]) -> None:
        self.facts = Facts()
        self.extra = extra
        self.device_names: set[str] = set()
        self.name_args: list[str] = []  # names passed to autocast (suspicious if a torch.device)
        self.dtype_names: list[str] = []  # names in autocast's dtype slot (suspicious if a bool)
        self.bool_names: set[str] = set()  # names bound to a comparison or ``not``, or annotated bool
        self.device_passed = False  # ``f(torch.device(...))``: a parameter may hold a torch.device
        self.handlers = {
            ast.FunctionDef: self._decorated,
            ast.AsyncFunctionDef: self._decorated,
            ast.ClassDef: self._class,
            ast.With: self._with,
            ast.AsyncWith: self._with,
            ast.Name: self._name,
            ast.Attribute: self._attribute,
            ast.Call: self._call,
            ast.arg: self._arg,
            ast.Import: self._import,
            ast.ImportFrom: self._import_from,
            ast.Assign: self._assign,
            ast.AnnAssign: self._ann_assign,
        }

    def run(self, tree: ast.AST) -> Facts:
        handlers = self.handlers
        stack = [tree]
        pop, push, extend = stack.pop, stack.append, stack.extend
        AST = ast.AST
        chained: set[int] = set()  # inner links of a chain already measured
        longest = 0
        nodes = 0
        while stack:
            node = pop()
            t = type(node)
            nodes += 1
            if t in _CONTAINERS and _constant(node):
                continue  # a literal: nothing to screen, and LibCST never sees a large one's elements
            link = _CHAIN.get(t)
            if link is not None and id(node) not in chained:
                # CPython parses these chains without nesting limits, LibCST's parser slows down
                # super-linearly on them: measured once from the head of each chain
                n, depth = node, 0
                while link is not None:
                    chained.add(id(n))
                    depth += 1
                    n = getattr(n, link)
                    link = _CHAIN.get(type(n))
                if depth > longest:
                    longest = depth
            h = handlers.get(t)
            if h is not None:
                h(node)
            for name in _child_fields(t):
                v = getattr(node, name, None)
                if v is None:
                    continue
                if type(v) is list:
                    extend(x for x in v if isinstance(x, AST))
                elif isinstance(v, AST):
                    push(v)
        f = self.facts
        f.longest_chain = longest
        f.nodes = nodes
        if self.name_args and (self.device_passed or any(n in self.device_names for n in self.name_args)):
            f.suspicious_autocast_args = True
        if any(n in self.bool_names for n in self.dtype_names):
            f.suspicious_autocast_args = True  # ``torch.autocast("cuda", amp)`` with ``amp: bool``
        if f.scale_call and f.backward:
            f.scaler_evidence = True  # ``x.scale(loss).backward()``: evidence by use
        return f

    def _decorated(self, node) -> None:
        for d in node.decorator_list:
            if _mentions_autocast(d):
                self.facts.autocast_region = True
                if not isinstance(d, ast.Call):
                    self.facts.suspicious_autocast_args = True  # a bare @autocast

    def _with(self, node) -> None:
        for item in node.items:
            e = item.context_expr
            if _mentions_autocast(e):
                self.facts.autocast_region = True
            elif isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr == T.ACCELERATOR_ACCUMULATE:
                self.facts.accumulate_block = True

    def _name(self, node: ast.Name) -> None:
        i = node.id
        if i in self.extra:
            self.facts.scaler_evidence = True
        # a context manager held in a variable (``ctx = torch.autocast(...)``; ``with ctx:``)
        if "autocast" in i:
            self.facts.autocast_region = True
        elif "custom_fwd" in i or "custom_bwd" in i:
            self.facts.custom_fwd = True

    def _attribute(self, node: ast.Attribute) -> None:
        a = node.attr
        if a in self.extra:
            self.facts.scaler_evidence = True
        if "custom_fwd" in a or "custom_bwd" in a:
            self.facts.custom_fwd = True
        elif a == "amp" and isinstance(node.value, ast.Attribute) and node.value.attr in _DEPRECATED_PARENTS_LAST:
            self.facts.deprecated_amp = True

    def _arg(self, node: ast.arg) -> None:
        if node.annotation is not None and _mentions_scaler_type(node.annotation):
            self.facts.scaler_evidence = True  # a parameter annotated as a GradScaler
        if isinstance(node.annotation, ast.Name) and node.annotation.id == "bool":
            self.bool_names.add(node.arg)

    def _ann_assign(self, node: ast.AnnAssign) -> None:
        if _mentions_scaler_type(node.annotation):
            self.facts.scaler_evidence = True
        self._assign(node)

    def _class(self, node: ast.ClassDef) -> None:
        if any(_mentions_scaler_type(b) for b in node.bases):
            self.facts.scaler_evidence = True  # a GradScaler subclass: built under its own name
        self._decorated(node)

    def _import(self, node: ast.Import) -> None:
        if any((a.name + ".").startswith(_DEPRECATED) for a in node.names):
            self.facts.deprecated_amp = True

    def _import_from(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if (module + ".").startswith(_DEPRECATED) or (
            module in _DEPRECATED_PARENTS and any(a.name == "amp" for a in node.names)
        ):
            self.facts.deprecated_amp = True

    def _assign(self, node) -> None:
        if isinstance(node.value, (ast.Compare, ast.UnaryOp)) or isinstance(getattr(node, "annotation", None), ast.Name) \
                and node.annotation.id == "bool":
            for t in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                if isinstance(t, ast.Name):
                    self.bool_names.add(t.id)
                elif isinstance(t, ast.Attribute):
                    self.bool_names.add(t.attr)
        if isinstance(node.value, ast.Call) and _last(node.value.func) == "device":
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        self.device_names.add(n.id)
                    elif isinstance(n, ast.Attribute):
                        self.device_names.add(n.attr)  # ``self.device = torch.device(...)``

    def _call(self, node: ast.Call) -> None:
        f = self.facts
        func = node.func
        name = _last(func)
        if not self.device_passed:
            for a in node.args + [k.value for k in node.keywords]:
                if isinstance(a, ast.Call) and _last(a.func) == "device":
                    self.device_passed = True
        if isinstance(func, ast.Attribute):
            method = func.attr
            if method == "unscale_":
                f.scaler_evidence = True
            elif method in _ACCELERATOR_UNSCALES:
                f.accelerator_unscale = True
            elif method in _SCALER_METHODS:
                recv = _last(func.value) if isinstance(func.value, (ast.Name, ast.Attribute)) else ""
                if "scaler" in recv.lower() or recv in self.extra:
                    f.scaler_evidence = True
                if method == "scale":
                    f.scale_call = True
        if any(n in name for n in _SCALER_NAMES):
            f.scaler_evidence = True  # a constructor (of GradScaler, a subclass or a re-export)
        if name == "backward" or name == "manual_backward":
            f.backward = True
        elif name == "BCELoss" or ("binary_cross_entropy" in name and "logits" not in name):
            f.bce = True
        elif name.endswith("autocast"):
            f.autocast_region = True
            if self._suspicious(node):
                f.suspicious_autocast_args = True
        elif name == "partial" and node.args and _mentions_autocast(node.args[0]):
            f.autocast_region = True

    def _suspicious(self, call: ast.Call) -> bool:
        """A literal AMP102 may reject: by position (device, dtype, enabled) or keyword."""
        if not call.args and not any(k.arg == "device_type" for k in call.keywords):
            return True  # a missing device
        if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
            return True
        pairs = list(zip(_SLOTS, call.args)) + [(k.arg, k.value) for k in call.keywords if k.arg in _ARG_KEYWORDS]
        return any(self._suspicious_value(slot, v) for slot, v in pairs)

    def _suspicious_value(self, slot: str, v: ast.AST) -> bool:
        if isinstance(v, ast.Constant):
            if slot == "device_type":
                return not (isinstance(v.value, str) and v.value.split(":", 1)[0] in _KNOWN_DEVICES)
            if slot in ("enabled", "cache_enabled"):
                return not isinstance(v.value, bool)
            return v.value is not None  # a literal dtype (None means the default)
        if isinstance(v, (ast.Call, ast.JoinedStr)):
            return True
        if isinstance(v, ast.Attribute):
            if slot == "device_type" and v.attr != "type":
                self.name_args.append(v.attr)  # ``self.device``: suspicious if it holds a torch.device
            return v.attr not in _AMP_DTYPES and v.attr != "type" and isinstance(v.value, ast.Name) and v.value.id == "torch"
        if isinstance(v, ast.Name):
            self.name_args.append(v.id)
            if slot == "dtype":
                self.dtype_names.append(v.id)
        return False


def _mentions_scaler_type(node: ast.AST) -> bool:
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and any(s in n.id for s in _SCALER_NAMES):
            return True
        if isinstance(n, ast.Attribute) and any(s in n.attr for s in _SCALER_NAMES):
            return True
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and any(s in n.value for s in _SCALER_NAMES):
            return True
    return False


def facts(tree: ast.Module, extra_names=()) -> Facts:
    return _Walker(frozenset(n.rsplit(".", 1)[-1] for n in extra_names)).run(tree)


SCREENS = {
    # every rule that needs a GradScaler: the model's evidence, in code (not comments or strings)
    "scaler_evidence": lambda f: f.scaler_evidence,
    # AMP005 through accelerate: an unscaling clip beside an accumulate block
    "accelerate_accumulate": lambda f: f.accumulate_block and f.accelerator_unscale,
    # custom_fwd / custom_bwd named in code
    "custom_fwd_code": lambda f: f.custom_fwd,
    # torch.cuda.amp / torch.cpu.amp named in code
    "deprecated_code": lambda f: f.deprecated_amp,
    # AMP105 / AMP106: a backward next to an autocast region
    "autocast_backward": lambda f: f.autocast_region and f.backward,
    # AMP103: a BCE next to an autocast region, or a training step under autocast that may call a
    # loss module of another project module
    "autocast_bce": lambda f: f.autocast_region and (f.bce or f.backward),
    # AMP102: an autocast call or decorator with a literal that may be wrong, or custom_fwd/bwd
    "autocast_args": lambda f: f.suspicious_autocast_args or f.custom_fwd or f.deprecated_amp,
}


#: screens implied by triggers: a rule whose every trigger has one runs only where one holds
TRIGGER_SCREENS = {
    "scaler": "scaler_evidence",
    "grad_scaler_name": "scaler_evidence",
    "accelerate_accumulate": "accelerate_accumulate",
    "custom_fwd": "custom_fwd_code",
    "deprecated_amp": "deprecated_code",
}
