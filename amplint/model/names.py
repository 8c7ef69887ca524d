"""Names of the torch AMP family, resolved through imports.

The model never uses LibCST's scope or qualified-name metadata (they cost several
times the parse); it only needs to know what the handful of torch names that AMP
rules read are called in this file.  :class:`ImportTable` maps each local name
bound by an ``import`` statement to the dotted name it refers to, and
:func:`dotted` turns an expression such as ``amp.GradScaler`` into
``torch.cuda.amp.GradScaler``.
"""

from __future__ import annotations

import libcst as cst

# --- symbol sets (fully qualified): the data lives in :mod:`amplint.torch_api` -------------

from .. import torch_api as T  # noqa: E402

GRAD_SCALER_CTORS = frozenset(T.GRAD_SCALERS)
SHARDED_SCALERS = frozenset(q for q, s in T.GRAD_SCALERS.items() if s.sharded)
AUTOCAST = T.AUTOCAST
CUSTOM_FWD = T.CUSTOM_FWD
CUSTOM_BWD = T.CUSTOM_BWD
DEPRECATED_PREFIXES = T.DEPRECATED_PREFIXES
CLIP_FUNCTIONS = T.CLIP_FUNCTIONS
NORM_FUNCTIONS = T.NORM_FUNCTIONS
NO_GRAD = T.NO_GRAD
SET_GRAD_ENABLED = T.SET_GRAD_ENABLED
ENABLE_GRAD = T.ENABLE_GRAD
AUTOGRAD_GRAD = T.AUTOGRAD_GRAD
AUTOGRAD_BACKWARD = T.AUTOGRAD_BACKWARD
TORCH_SAVE = T.TORCH_SAVE
AUTOGRAD_FUNCTION = T.AUTOGRAD_FUNCTION
BCE = T.BCE
BCE_LOSS = T.BCE_LOSS
FSDP = T.FSDP
FLOAT16 = T.FLOAT16
BFLOAT16 = T.BFLOAT16
AUTOCAST_DTYPES = FLOAT16 | BFLOAT16
KNOWN_DEVICES = T.DEVICE_TYPES
AUTOCAST_DEVICES = T.AUTOCAST_DEVICES
is_grad_scaler_ctor = T.is_scaler_class
is_optimizer_ctor = T.is_optimizer_class
is_deprecated_amp = T.is_deprecated


# --- import table -----------------------------------------------------------------


def dotted_text(node: cst.BaseExpression) -> str | None:
    """``a.b.c`` for a Name/Attribute chain, else None (no resolution)."""
    parts: list[str] = []
    t = type(node)  # exact types: ``isinstance`` on a LibCST class is an ABC check (hot path)
    while t is _ATTRIBUTE:
        parts.append(node.attr.value)  # type: ignore[attr-defined]
        node = node.value  # type: ignore[attr-defined]
        t = type(node)
    if t is _NAME:
        parts.append(node.value)  # type: ignore[attr-defined]
        return ".".join(reversed(parts))
    return None


_ATTRIBUTE, _NAME = cst.Attribute, cst.Name


def module_name(node: cst.BaseExpression | None) -> str:
    if node is None:
        return ""
    text = dotted_text(node)
    return text or ""


def _member(base: str, name: str) -> str:
    """``name`` of module ``base`` as written: ``.`` + ``hooks`` -> ``.hooks``, ``.utils`` + ``step``
    -> ``.utils.step``."""
    return f"{base}{name}" if base.endswith(".") else f"{base}.{name}"


class ImportTable:
    """Local name -> qualified dotted name, from every import statement in the file."""

    __slots__ = ("names", "star_torch", "star_other", "star_names")

    def __init__(self, star_names=None) -> None:
        self.names: dict[str, str] = {}
        self.star_torch: set[str] = set()
        self.star_other = False  # ``from config import *``: it may bring ``torch`` itself
        #: ``star_names(module as written)``: the top-level names a project module defines
        #: (what ``from engine import *`` binds), or None outside a project
        self.star_names = star_names

    def add(self, stmt: cst.Import | cst.ImportFrom, fallback: bool = False) -> None:
        """Record an import; a ``fallback`` one (in an ``except ImportError:`` handler) does not
        rebind a name the ``try`` body's import already bound."""
        names = self.names
        if fallback:
            self.names = {}
        try:
            self._add(stmt)
        finally:
            if fallback:
                added, self.names = self.names, names
                for k, v in added.items():
                    names.setdefault(k, v)

    def _add(self, stmt: cst.Import | cst.ImportFrom) -> None:
        if isinstance(stmt, cst.Import):
            for alias in stmt.names:
                full = module_name(alias.name)
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    self.names[alias.asname.name.value] = full
                else:
                    head = full.split(".", 1)[0]
                    self.names[head] = head
            return
        if stmt.relative:
            base = "." * len(stmt.relative) + module_name(stmt.module)
        else:
            base = module_name(stmt.module)
        if isinstance(stmt.names, cst.ImportStar):
            if base.startswith("torch"):
                self.star_torch.add(base)
            else:
                self.star_other = True
                if self.star_names is not None:
                    # a project module's functions and classes, as if imported by name (a later
                    # import of the same name rebinds it)
                    for name in sorted(self.star_names(base)):
                        self.names[name] = _member(base, name)
            return
        for alias in stmt.names:
            name = module_name(alias.name)
            local = name
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            # ``from . import hooks`` -> ``.hooks``; ``from .utils import step`` -> ``.utils.step``
            self.names[local] = _member(base, name) if base else name

    def resolve(self, text: str | None) -> str | None:
        """Qualify a dotted expression text; None when its head is not an import."""
        if text is None:
            return None
        head, _, rest = text.partition(".")
        full = self.names.get(head)
        if full is None:
            if self.star_other and head in _STAR_CONVENTIONS:
                # a name no import of this file binds, brought by a star import: by convention
                full = _STAR_CONVENTIONS[head]
                return f"{full}.{rest}" if rest else full
            if self.star_torch:
                for base in sorted(self.star_torch):
                    candidate = f"{base}.{text}"
                    if _known_symbol(candidate):
                        return candidate
            return None
        return f"{full}.{rest}" if rest else full

    def qualify(self, node: cst.BaseExpression) -> str | None:
        return self.resolve(dotted_text(node))


_ALL_KNOWN = T.KNOWN_SYMBOLS
#: the names a star import of a project module (``from config import *``) conventionally brings
_STAR_CONVENTIONS = {"torch": "torch", "nn": "torch.nn", "F": "torch.nn.functional", "optim": "torch.optim"}


def _known_symbol(qual: str) -> bool:
    return qual in _ALL_KNOWN


def calls_by_name(call: cst.Call) -> bool:
    """``getattr(obj, name)(...)``: a hook (a method chosen by its name) called on ``obj``."""
    f = call.func
    return isinstance(f, cst.Call) and isinstance(f.func, cst.Name) and f.func.value == "getattr"
