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

_KNOWN_DEVICES = frozenset(
    {"cpu", "cuda", "xpu", "mps", "hpu", "xla", "ipu", "mtia", "maia", "npu", "musa", "meta", "privateuseone"}
)
_AMP_DTYPES = frozenset({"float16", "half", "bfloat16"})
_ARG_KEYWORDS = frozenset({"device_type", "dtype", "enabled", "cache_enabled"})


@dataclass
class Facts:
    autocast_region: bool = False  # an autocast `with` item, decorator, or partial(autocast, ...)
    backward: bool = False  # a `.backward(...)` / `backward(...)` call
    bce: bool = False  # binary_cross_entropy (not with logits) or BCELoss
    suspicious_autocast_args: bool = False  # an autocast call or decorator AMP102 may reject
    custom_fwd: bool = False  # custom_fwd / custom_bwd mentioned
    deprecated_amp: bool = False  # torch.cuda.amp / torch.cpu.amp (whose autocast takes `enabled` first)


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


class _Visitor(ast.NodeVisitor):
    def __init__(self, device_names: set[str]) -> None:
        self.facts = Facts()
        self.device_names = device_names

    def _decorators(self, node) -> None:
        for d in node.decorator_list:
            if _mentions_autocast(d):
                self.facts.autocast_region = True
                if not isinstance(d, ast.Call):
                    self.facts.suspicious_autocast_args = True  # a bare @autocast
        self.generic_visit(node)

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _decorators

    def visit_With(self, node) -> None:
        for item in node.items:
            if _mentions_autocast(item.context_expr):
                self.facts.autocast_region = True
        self.generic_visit(node)

    visit_AsyncWith = visit_With

    def visit_Name(self, node: ast.Name) -> None:
        # a context manager held in a variable (``ctx = torch.autocast(...)``; ``with ctx:``)
        if "autocast" in node.id:
            self.facts.autocast_region = True
        elif "custom_fwd" in node.id or "custom_bwd" in node.id:
            self.facts.custom_fwd = True

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if "custom_fwd" in node.attr or "custom_bwd" in node.attr:
            self.facts.custom_fwd = True
        elif node.attr == "amp" and isinstance(node.value, ast.Attribute) and node.value.attr in ("cuda", "cpu"):
            self.facts.deprecated_amp = True
        self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        if any(a.name.startswith(("torch.cuda.amp", "torch.cpu.amp")) for a in node.names):
            self.facts.deprecated_amp = True

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if module.startswith(("torch.cuda.amp", "torch.cpu.amp")) or (
            module in ("torch.cuda", "torch.cpu") and any(a.name == "amp" for a in node.names)
        ):
            self.facts.deprecated_amp = True

    def visit_Call(self, node: ast.Call) -> None:
        name = _last(node.func)
        if name == "backward" or name == "manual_backward":
            self.facts.backward = True
        elif name == "BCELoss" or ("binary_cross_entropy" in name and "logits" not in name):
            self.facts.bce = True
        elif name.endswith("autocast"):
            self.facts.autocast_region = True
            if self._suspicious(node):
                self.facts.suspicious_autocast_args = True
        elif name == "partial" and node.args and _mentions_autocast(node.args[0]):
            self.facts.autocast_region = True
        self.generic_visit(node)

    def _suspicious(self, call: ast.Call) -> bool:
        values = list(call.args) + [k.value for k in call.keywords if k.arg in _ARG_KEYWORDS or k.arg is None]
        if not call.args and not any(k.arg == "device_type" for k in call.keywords):
            return True  # a missing device
        return any(self._suspicious_value(v) for v in values)

    def _suspicious_value(self, v: ast.AST) -> bool:
        if isinstance(v, ast.Constant):
            return not (isinstance(v.value, str) and v.value.split(":", 1)[0] in _KNOWN_DEVICES)
        if isinstance(v, (ast.Call, ast.Starred, ast.JoinedStr)):
            return True
        if isinstance(v, ast.Attribute):
            return v.attr not in _AMP_DTYPES and v.attr != "type" and isinstance(v.value, ast.Name) and v.value.id == "torch"
        if isinstance(v, ast.Name):
            return v.id in self.device_names
        return False


def facts(tree: ast.Module) -> Facts:
    device_names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Call) and _last(node.value.func) == "device":
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        device_names.add(n.id)
    v = _Visitor(device_names)
    v.visit(tree)
    return v.facts


SCREENS = {
    # AMP105 / AMP106: a backward next to an autocast region
    "autocast_backward": lambda f: f.autocast_region and f.backward,
    # AMP103: a BCE next to an autocast region
    "autocast_bce": lambda f: f.autocast_region and f.bce,
    # AMP102: an autocast call or decorator with a literal that may be wrong, or custom_fwd/bwd
    "autocast_args": lambda f: f.suspicious_autocast_args or f.custom_fwd or f.deprecated_amp,
}
