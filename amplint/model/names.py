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

# --- symbol sets (fully qualified) -------------------------------------------------

_AMP_NAMESPACES = ("torch.amp", "torch.cuda.amp", "torch.cpu.amp")

GRAD_SCALER_CTORS = frozenset(
    {
        "torch.GradScaler",
        "torch.amp.GradScaler",
        "torch.amp.grad_scaler.GradScaler",
        "torch.cuda.amp.GradScaler",
        "torch.cuda.amp.grad_scaler.GradScaler",
        "torch.cpu.amp.GradScaler",
        "torch.cpu.amp.grad_scaler.GradScaler",
        "torch.distributed.fsdp.ShardedGradScaler",
        "torch.distributed.fsdp.sharded_grad_scaler.ShardedGradScaler",
    }
)
SHARDED_SCALERS = frozenset(
    {
        "torch.distributed.fsdp.ShardedGradScaler",
        "torch.distributed.fsdp.sharded_grad_scaler.ShardedGradScaler",
    }
)

AUTOCAST = frozenset(
    {
        "torch.autocast",
        "torch.amp.autocast",
        "torch.amp.autocast_mode.autocast",
        "torch.cuda.amp.autocast",
        "torch.cuda.amp.autocast_mode.autocast",
        "torch.cpu.amp.autocast",
        "torch.cpu.amp.autocast_mode.autocast",
    }
)
CUSTOM_FWD = frozenset(f"{ns}.custom_fwd" for ns in _AMP_NAMESPACES) | {
    "torch.amp.autocast_mode.custom_fwd",
    "torch.cuda.amp.autocast_mode.custom_fwd",
}
CUSTOM_BWD = frozenset(f"{ns}.custom_bwd" for ns in _AMP_NAMESPACES) | {
    "torch.amp.autocast_mode.custom_bwd",
    "torch.cuda.amp.autocast_mode.custom_bwd",
}

# Deprecated spellings (AMP101) and their replacement in torch.amp.
DEPRECATED_PREFIXES = ("torch.cuda.amp.", "torch.cpu.amp.")

CLIP_FUNCTIONS = frozenset(
    f"torch.nn.utils{mod}.{fn}"
    for mod in ("", ".clip_grad")
    for fn in ("clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm")
)

NORM_FUNCTIONS = frozenset({"torch.norm", "torch.linalg.norm", "torch.linalg.vector_norm", "torch.linalg.matrix_norm"})

NO_GRAD = frozenset(
    {
        "torch.no_grad",
        "torch.autograd.no_grad",
        "torch.autograd.grad_mode.no_grad",
        "torch.inference_mode",
        "torch.autograd.inference_mode",
        "torch.autograd.grad_mode.inference_mode",
    }
)
SET_GRAD_ENABLED = frozenset(
    {"torch.set_grad_enabled", "torch.autograd.set_grad_enabled", "torch.autograd.grad_mode.set_grad_enabled"}
)
ENABLE_GRAD = frozenset({"torch.enable_grad", "torch.autograd.enable_grad", "torch.autograd.grad_mode.enable_grad"})

AUTOGRAD_GRAD = frozenset({"torch.autograd.grad"})
AUTOGRAD_BACKWARD = frozenset({"torch.autograd.backward"})
TORCH_SAVE = frozenset({"torch.save"})
AUTOGRAD_FUNCTION = frozenset({"torch.autograd.Function", "torch.autograd.function.Function"})

BCE = frozenset(
    {
        "torch.nn.functional.binary_cross_entropy",
        "torch.binary_cross_entropy",
        "torch._C._nn.binary_cross_entropy",
    }
)
BCE_LOSS = frozenset({"torch.nn.BCELoss", "torch.nn.modules.loss.BCELoss"})

FSDP = frozenset(
    {
        "torch.distributed.fsdp.FullyShardedDataParallel",
        "torch.distributed.fsdp.fully_sharded_data_parallel.FullyShardedDataParallel",
        "torch.distributed.fsdp.fully_shard",
        "torch.distributed._composable.fsdp.fully_shard",
        "torch.distributed._composable.fully_shard",
    }
)

FLOAT16 = frozenset({"torch.float16", "torch.half"})
BFLOAT16 = frozenset({"torch.bfloat16"})
AUTOCAST_DTYPES = FLOAT16 | BFLOAT16
KNOWN_DEVICES = frozenset(
    {"cpu", "cuda", "xpu", "mps", "hpu", "xla", "ipu", "mtia", "meta", "maia", "privateuseone", "mkldnn", "npu", "musa"}
)
AUTOCAST_DEVICES = frozenset({"cpu", "cuda", "xpu", "mps", "hpu", "xla", "ipu", "mtia", "maia", "npu", "musa"})


def is_grad_scaler_ctor(qual: str | None) -> bool:
    if qual is None:
        return False
    if qual in GRAD_SCALER_CTORS:
        return True
    last = qual.rsplit(".", 1)[-1]
    # ``from mypkg.amp import GradScaler`` re-exports or subclasses are still scalers.
    return last in ("GradScaler", "ShardedGradScaler")


def is_optimizer_ctor(qual: str | None) -> bool:
    return qual is not None and qual.startswith("torch.optim.") and qual.rsplit(".", 1)[-1][:1].isupper() and (
        ".lr_scheduler" not in qual and ".swa_utils" not in qual
    )


def is_deprecated_amp(qual: str | None) -> bool:
    return qual is not None and qual.startswith(DEPRECATED_PREFIXES)


# --- import table -----------------------------------------------------------------


def dotted_text(node: cst.BaseExpression) -> str | None:
    """``a.b.c`` for a Name/Attribute chain, else None (no resolution)."""
    parts: list[str] = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if isinstance(node, cst.Name):
        parts.append(node.value)
        return ".".join(reversed(parts))
    return None


def module_name(node: cst.BaseExpression | None) -> str:
    if node is None:
        return ""
    text = dotted_text(node)
    return text or ""


class ImportTable:
    """Local name -> qualified dotted name, from every import statement in the file."""

    __slots__ = ("names", "star_torch")

    def __init__(self) -> None:
        self.names: dict[str, str] = {}
        self.star_torch: set[str] = set()

    def add(self, stmt: cst.Import | cst.ImportFrom) -> None:
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
            return
        for alias in stmt.names:
            name = module_name(alias.name)
            local = name
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            self.names[local] = f"{base}.{name}" if base else name

    def resolve(self, text: str | None) -> str | None:
        """Qualify a dotted expression text; None when its head is not an import."""
        if text is None:
            return None
        head, _, rest = text.partition(".")
        full = self.names.get(head)
        if full is None:
            if self.star_torch:
                for base in sorted(self.star_torch):
                    candidate = f"{base}.{text}"
                    if _known_symbol(candidate):
                        return candidate
            return None
        return f"{full}.{rest}" if rest else full

    def qualify(self, node: cst.BaseExpression) -> str | None:
        return self.resolve(dotted_text(node))


_ALL_KNOWN = (
    GRAD_SCALER_CTORS
    | AUTOCAST
    | CUSTOM_FWD
    | CUSTOM_BWD
    | CLIP_FUNCTIONS
    | NO_GRAD
    | SET_GRAD_ENABLED
    | ENABLE_GRAD
    | BCE
    | BCE_LOSS
)


def _known_symbol(qual: str) -> bool:
    return qual in _ALL_KNOWN
