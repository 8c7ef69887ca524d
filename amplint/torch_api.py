"""What amplint knows about torch's AMP API, as data: one source of truth.

Every spelling of the GradScaler family, autocast, custom_fwd/custom_bwd, the clip and norm
functions, optimizers, learning-rate schedulers, FSDP constructors, grad-mode switches, devices
and dtypes, with their signatures per namespace and the deprecated names with their
replacements. The byte prefilter (:mod:`amplint.prefilter`), the AST screen
(:mod:`amplint.screen`) and the model (:mod:`amplint.model`) all read this module; it imports
nothing but the standard library (no LibCST), so the CLI can build its prefilter from it.

Facts are taken from torch 2.13's sources (``torch/amp/grad_scaler.py``,
``torch/amp/autocast_mode.py``, ``torch/cuda/amp/*.py``, ``torch/cpu/amp/*.py``,
``torch/distributed/fsdp/sharded_grad_scaler.py``) and ``../shared/amp-semantics.md``.
"""

from __future__ import annotations

import re
from typing import Iterable, NamedTuple

# --- GradScaler ------------------------------------------------------------------------------


class ScalerSpec(NamedTuple):
    """A GradScaler constructor: positional order of its parameters and where it comes from."""

    family: str  # "device_first" | "init_scale_first" | "sharded"
    params: tuple[str, ...]
    device: str | None  # the device a deprecated spelling implies; None: the ``device`` argument
    deprecated: bool = False
    sharded: bool = False


#: ``torch.amp.GradScaler(device="cuda", init_scale=2.**16, growth_factor=2.0, backoff_factor=0.5,
#: growth_interval=2000, enabled=True)``
DEVICE_FIRST = ("device", "init_scale", "growth_factor", "backoff_factor", "growth_interval", "enabled")
#: ``torch.cuda.amp.GradScaler(init_scale=2.**16, growth_factor=2.0, backoff_factor=0.5,
#: growth_interval=2000, enabled=True)`` (deprecated since 2.4)
INIT_SCALE_FIRST = ("init_scale", "growth_factor", "backoff_factor", "growth_interval", "enabled")
#: ``ShardedGradScaler(device="cuda", init_scale=2.**16, backoff_factor=0.5, growth_factor=2.0,
#: growth_interval=2000, enabled=True, process_group=...)``: backoff before growth
SHARDED = ("device", "init_scale", "backoff_factor", "growth_factor", "growth_interval", "enabled", "process_group")

_PLAIN = ScalerSpec("device_first", DEVICE_FIRST, None)
_SHARDED = ScalerSpec("sharded", SHARDED, None, sharded=True)
GRAD_SCALERS: dict[str, ScalerSpec] = {
    "torch.GradScaler": _PLAIN,
    "torch.amp.GradScaler": _PLAIN,
    "torch.amp.grad_scaler.GradScaler": _PLAIN,
    "torch.cuda.amp.GradScaler": ScalerSpec("init_scale_first", INIT_SCALE_FIRST, "cuda", deprecated=True),
    "torch.cuda.amp.grad_scaler.GradScaler": ScalerSpec("init_scale_first", INIT_SCALE_FIRST, "cuda", deprecated=True),
    "torch.cpu.amp.GradScaler": ScalerSpec("init_scale_first", INIT_SCALE_FIRST, "cpu", deprecated=True),
    "torch.cpu.amp.grad_scaler.GradScaler": ScalerSpec("init_scale_first", INIT_SCALE_FIRST, "cpu", deprecated=True),
    "torch.distributed.fsdp.ShardedGradScaler": _SHARDED,
    "torch.distributed.fsdp.sharded_grad_scaler.ShardedGradScaler": _SHARDED,
}
SCALER_CLASS_NAMES = frozenset({"GradScaler", "ShardedGradScaler"})
#: the protocol methods (their order: scale -> backward -> unscale_ -> clip -> step -> update)
SCALER_PROTOCOL = frozenset({"scale", "unscale_", "step", "update"})
#: methods that read or restore state and change nothing in the protocol
SCALER_QUERIES = frozenset({
    "get_scale", "is_enabled", "state_dict", "load_state_dict", "get_growth_factor", "get_backoff_factor",
    "get_growth_interval", "set_growth_factor", "set_backoff_factor", "set_growth_interval", "_get_growth_tracker",
    "__getstate__", "__setstate__", "_get_scale_async",
})
#: the arguments a protocol method takes besides ``self``: ``(most positional, keyword names)``
#: (``step(optimizer, *args, **kwargs)`` hands the rest on to ``optimizer.step``)
SCALER_METHOD_PARAMS = {"scale": (1, frozenset({"outputs"})), "unscale_": (1, frozenset({"optimizer"})),
                        "update": (1, frozenset({"new_scale"}))}


def fits_scaler_method(method: str, positional: int, keywords: Iterable[str], starred: bool = False) -> bool:
    """A call ``x.method(...)`` with these arguments could be a GradScaler's: ``kwargs.update(
    layout=layout)`` or ``self.scale(x, y)`` cannot."""
    params = SCALER_METHOD_PARAMS.get(method)
    if params is None or starred:
        return True
    most, names = params
    keywords = list(keywords)
    return positional + len(keywords) <= most and all(k in names for k in keywords)


#: the constructor default: ``device="cuda"``, which disables itself on a host without CUDA
SCALER_DEFAULT_DEVICE = "cuda"


def scaler_spec(qual: str | None) -> ScalerSpec | None:
    return GRAD_SCALERS.get(qual) if qual is not None else None


def is_scaler_class(qual: str | None) -> bool:
    """A GradScaler constructor: torch's own, or a re-export/subclass spelled ``*.GradScaler``."""
    if qual is None:
        return False
    return qual in GRAD_SCALERS or qual.rsplit(".", 1)[-1] in SCALER_CLASS_NAMES


# --- autocast ----------------------------------------------------------------------------------


class AutocastSpec(NamedTuple):
    params: tuple[str, ...]
    device: str | None  # implied by a deprecated namespace; None: the ``device_type`` argument
    deprecated: bool = False


#: ``torch.autocast(device_type, dtype=None, enabled=True, cache_enabled=None)``
AUTOCAST_PARAMS = ("device_type", "dtype", "enabled", "cache_enabled")
#: ``torch.cuda.amp.autocast(enabled=True, dtype=torch.float16, cache_enabled=True)``
OLD_AUTOCAST_PARAMS = ("enabled", "dtype", "cache_enabled")
_NEW_AC = AutocastSpec(AUTOCAST_PARAMS, None)
AUTOCASTS: dict[str, AutocastSpec] = {
    "torch.autocast": _NEW_AC,
    "torch.amp.autocast": _NEW_AC,
    "torch.amp.autocast_mode.autocast": _NEW_AC,
    "torch.cuda.amp.autocast": AutocastSpec(OLD_AUTOCAST_PARAMS, "cuda", deprecated=True),
    "torch.cuda.amp.autocast_mode.autocast": AutocastSpec(OLD_AUTOCAST_PARAMS, "cuda", deprecated=True),
    "torch.cpu.amp.autocast": AutocastSpec(OLD_AUTOCAST_PARAMS, "cpu", deprecated=True),
    "torch.cpu.amp.autocast_mode.autocast": AutocastSpec(OLD_AUTOCAST_PARAMS, "cpu", deprecated=True),
}
AUTOCAST = frozenset(AUTOCASTS)
NEW_AUTOCAST = frozenset(q for q, s in AUTOCASTS.items() if not s.deprecated)
DEPRECATED_AUTOCAST = frozenset(q for q, s in AUTOCASTS.items() if s.deprecated)
#: what autocast uses when no dtype is given, per device
#: (only the two measured in ../shared/amp-semantics.md; other devices count as unknown)
AUTOCAST_DEFAULT_DTYPE = {"cuda": "float16", "cpu": "bfloat16"}

# ``custom_fwd(fwd=None, *, device_type, cast_inputs=None)`` / ``custom_bwd(bwd=None, *, device_type)``
CUSTOM_FWD = frozenset({"torch.amp.custom_fwd", "torch.amp.autocast_mode.custom_fwd",
                        "torch.cuda.amp.custom_fwd", "torch.cuda.amp.autocast_mode.custom_fwd"})
CUSTOM_BWD = frozenset({"torch.amp.custom_bwd", "torch.amp.autocast_mode.custom_bwd",
                        "torch.cuda.amp.custom_bwd", "torch.cuda.amp.autocast_mode.custom_bwd"})
NEW_CUSTOM_FWD = frozenset(q for q in CUSTOM_FWD if q.startswith("torch.amp."))
NEW_CUSTOM_BWD = frozenset(q for q in CUSTOM_BWD if q.startswith("torch.amp."))
CUSTOM_FWD_PARAMS = ("fwd", "cast_inputs")  # besides the keyword-only device_type
CUSTOM_BWD_PARAMS = ("bwd",)

# --- deprecations --------------------------------------------------------------------------------


class Deprecation(NamedTuple):
    symbol: str  # "autocast" | "GradScaler" | "custom_fwd" | "custom_bwd"
    device: str  # the device the old namespace implies
    since: tuple[int, int] = (2, 4)  # the FutureWarning (pytorch/pytorch#126527)
    #: the torch release that has the replacement (``torch.amp.GradScaler(device, ...)``, ``device_type=``)
    replacement_needs: tuple[int, int] = (2, 4)

    @property
    def replacement(self) -> str:
        if self.symbol in ("custom_fwd", "custom_bwd"):
            return f'torch.amp.{self.symbol}(device_type="{self.device}")'
        return f'torch.amp.{self.symbol}("{self.device}", ...)'


DEPRECATED_NAMESPACES = {"torch.cuda.amp": "cuda", "torch.cpu.amp": "cpu"}
DEPRECATED_PREFIXES = tuple(ns + "." for ns in DEPRECATED_NAMESPACES)
DEPRECATED: dict[str, Deprecation] = {}
for _ns, _syms in (("torch.cuda.amp", ("autocast", "GradScaler", "custom_fwd", "custom_bwd")),
                   ("torch.cpu.amp", ("autocast", "GradScaler"))):
    for _s in _syms:
        _sub = "grad_scaler" if _s == "GradScaler" else "autocast_mode"
        DEPRECATED[f"{_ns}.{_s}"] = DEPRECATED[f"{_ns}.{_sub}.{_s}"] = Deprecation(_s, DEPRECATED_NAMESPACES[_ns])
#: positional parameters of the deprecated constructors (the device comes from the namespace)
OLD_PARAMS = {"autocast": OLD_AUTOCAST_PARAMS, "GradScaler": INIT_SCALE_FIRST}


def is_deprecated(qual: str | None) -> bool:
    return qual is not None and qual.startswith(DEPRECATED_PREFIXES)


def deprecation(qual: str | None) -> tuple[Deprecation, bool] | None:
    """The deprecation a qualified name refers to, and whether it is the name itself (True) or
    an attribute of it (``torch.cuda.amp.GradScaler.unscale_``: False)."""
    if qual is None:
        return None
    hit = DEPRECATED.get(qual)
    if hit is not None:
        return hit, True
    for name, dep in DEPRECATED.items():
        if qual.startswith(name + "."):
            return dep, False
    return None


# --- gradients -----------------------------------------------------------------------------------

CLIP_FUNCTIONS = frozenset(
    f"torch.nn.utils{mod}.{fn}"
    for mod in ("", ".clip_grad")
    for fn in ("clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm")
)
NORM_FUNCTIONS = frozenset({"torch.norm", "torch.linalg.norm", "torch.linalg.vector_norm", "torch.linalg.matrix_norm"})
#: methods on ``p.grad`` that edit it without rescaling it
#: (``p.grad.add_(noise)``: a term of fixed size added to scaled gradients is 1/S of it after unscale_)
GRAD_EDIT_METHODS = frozenset({"clamp_", "clamp", "clip_", "clip", "nan_to_num_", "nan_to_num", "masked_fill_", "sign_",
                               "add_", "sub_", "addcmul_", "addcdiv_"})
GRAD_EDIT_FUNCTIONS = frozenset({"torch.clamp", "torch.clip", "torch.nan_to_num", "torch.clamp_", "torch.nan_to_num_"})
#: reductions that read a gradient's magnitude (``p.grad.pow(2).sum()``, ``p.grad.abs().max()``)
GRAD_READ_METHODS = frozenset({"norm", "sum", "mean", "max", "amax", "std", "var"})
GRAD_READ_FUNCTIONS = frozenset({"torch.sum", "torch.mean", "torch.max", "torch.amax", "torch.std", "torch.var"})
#: element tests whose result does not depend on the scale (``p.grad.isnan().sum()``)
GRAD_PREDICATES = frozenset({
    "isnan", "isinf", "isfinite", "isposinf", "isneginf", "eq", "ne", "gt", "ge", "lt", "le", "bool", "sign",
    "logical_not", "logical_and", "logical_or", "nonzero", "count_nonzero", "any", "all", "__eq__", "__ne__",
})
AUTOGRAD_GRAD = frozenset({"torch.autograd.grad"})
AUTOGRAD_BACKWARD = frozenset({"torch.autograd.backward"})
BACKWARD_METHODS = frozenset({"backward", "manual_backward"})
#: ``self.manual_backward(loss)``, ``engine.backward_step(loss)``: calls that may produce gradients
BACKWARD_LIKE = re.compile(r"^_*(manual_|run_|do_)?backward(_step|_pass)?$", re.I)

# --- grad mode -----------------------------------------------------------------------------------

NO_GRAD = frozenset({
    "torch.no_grad", "torch.autograd.no_grad", "torch.autograd.grad_mode.no_grad",
    "torch.inference_mode", "torch.autograd.inference_mode", "torch.autograd.grad_mode.inference_mode",
})
SET_GRAD_ENABLED = frozenset({"torch.set_grad_enabled", "torch.autograd.set_grad_enabled",
                              "torch.autograd.grad_mode.set_grad_enabled"})
ENABLE_GRAD = frozenset({"torch.enable_grad", "torch.autograd.enable_grad", "torch.autograd.grad_mode.enable_grad"})
REGION_CALLS = AUTOCAST | NO_GRAD | SET_GRAD_ENABLED | ENABLE_GRAD

# --- optimizers and schedulers ----------------------------------------------------------------

#: ``torch.optim`` classes (any capitalised ``torch.optim.X`` outside lr_scheduler/swa_utils counts)
OPTIMIZERS = frozenset({
    "SGD", "Adam", "AdamW", "Adamax", "Adagrad", "Adadelta", "ASGD", "LBFGS", "NAdam", "RAdam", "RMSprop", "Rprop",
    "SparseAdam", "Adafactor", "Muon",
})
#: optimizer classes of other libraries, by their last name (fused/8-bit/LARS/LAMB variants)
OTHER_OPTIMIZERS = frozenset({
    "FusedAdam", "FusedLAMB", "FusedSGD", "FusedNovoGrad", "DeepSpeedCPUAdam", "AdamW8bit", "Adam8bit", "PagedAdamW",
    "PagedAdamW8bit", "Lion", "LAMB", "Lamb", "LARS", "Lars", "Adafactor", "AdaBelief", "Ranger", "SophiaG", "Prodigy",
})
#: what a name that holds an optimizer is usually called
OPTIMIZER_NAME = re.compile(r"^(opt|optim|optimizer|optimiser)(_\w+)?$|optimizer$|optim$", re.I)
#: the wider spelling used where a key names an optimizer state (checkpoints)
OPTIMIZER_STATE_NAME = re.compile(r"^(opt|optim|optimizer|optimiser)(_\w+)?$|optimi[sz]er$|_optim$|^optimizers?$", re.I)
LR_SCHEDULER_PREFIX = "torch.optim.lr_scheduler."
#: names that say a value is not an optimizer even when they contain "optim"
NOT_OPTIMIZER_WORDS = ("sched", "wrapper")
#: a container of optimizers, read through a subscript (``opts["G"].step()``, ``self.optimizers[name]``)
OPTIMIZERS_NAME = re.compile(r"^(opts|optims|optimizers|optimisers)$|_(opts|optims|optimizers|optimisers)$", re.I)


def is_optimizer_class(qual: str | None) -> bool:
    if qual is None:
        return False
    last = qual.rsplit(".", 1)[-1]
    if qual.startswith("torch.optim."):
        return last[:1].isupper() and ".lr_scheduler" not in qual and ".swa_utils" not in qual
    return last in OTHER_OPTIMIZERS


def optimizer_like_name(key: str) -> bool:
    """A receiver whose last name says it holds an optimizer (``self.optimizer``, ``opt_g``), or
    an item of a container whose name says it holds optimizers (``opts["G"]``)."""
    last = key.rsplit(".", 1)[-1].split("[", 1)[0]
    low = last.lower()
    if any(w in low for w in NOT_OPTIMIZER_WORDS):
        return False
    if "[" in key.rsplit(".", 1)[-1]:
        return bool(OPTIMIZER_NAME.search(last) or OPTIMIZERS_NAME.search(last))
    return bool(OPTIMIZER_NAME.search(last))


_MODEL_WORDS = ("model", "net", "network")


def submodule_receiver(key: str | None) -> bool:
    """``model.backbone``, ``self.model.encoder``: an attribute of an object named like a model,
    that is a part of it (not DDP's ``model.module``, the whole of it, nor an optimizer)."""
    if key is None or "[" in key:
        return False
    parts = key.split(".")
    if len(parts) < 2 or parts[-1] in ("module", "_orig_mod", "model") or optimizer_like_name(key):
        return False
    parent = parts[-2].lower()
    return any(parent == w or parent.endswith("_" + w) or parent.endswith(w) for w in _MODEL_WORDS)


def is_lr_scheduler(qual: str | None) -> bool:
    return qual is not None and qual.startswith(LR_SCHEDULER_PREFIX)


# --- FSDP, checkpoints, losses -----------------------------------------------------------------

FSDP1 = frozenset({
    "torch.distributed.fsdp.FullyShardedDataParallel",
    "torch.distributed.fsdp.fully_sharded_data_parallel.FullyShardedDataParallel",
})
FSDP2 = frozenset({
    "torch.distributed.fsdp.fully_shard", "torch.distributed._composable.fsdp.fully_shard",
    "torch.distributed._composable.fully_shard",
})
FSDP = FSDP1 | FSDP2
# --- accelerate ------------------------------------------------------------------------
# ``accelerate.Accelerator`` owns a GradScaler under ``mixed_precision="fp16"``; these methods
# call its ``unscale_`` on every call (accelerator.py: ``clip_grad_norm_`` ->
# ``unscale_gradients`` -> ``scaler.unscale_(opt)``), while the wrapped optimizer's ``step``,
# and with it ``scaler.update()``, runs only when ``sync_gradients`` is true.
ACCELERATOR = frozenset({"accelerate.Accelerator", "accelerate.accelerator.Accelerator"})
ACCELERATOR_UNSCALES = frozenset({"clip_grad_norm_", "clip_grad_value_", "unscale_gradients"})
ACCELERATOR_ACCUMULATE = "accumulate"
ACCELERATOR_SYNC = "sync_gradients"
ACCELERATOR_NO_SCALER_PRECISIONS = frozenset({"no", "bf16", "fp8"})
SHARDED_SCALER_IMPORT = "from torch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler"
TORCH_SAVE = frozenset({"torch.save"})
AUTOGRAD_FUNCTION = frozenset({"torch.autograd.Function", "torch.autograd.function.Function"})
BCE = frozenset({"torch.nn.functional.binary_cross_entropy", "torch.binary_cross_entropy",
                 "torch._C._nn.binary_cross_entropy"})
BCE_LOSS = frozenset({"torch.nn.BCELoss", "torch.nn.modules.loss.BCELoss"})
TORCH_DEVICE = "torch.device"

# --- devices and dtypes --------------------------------------------------------------------------

#: device types torch accepts in a device string, plus the out-of-tree backends that rename
#: ``privateuseone`` (Ascend npu, Moore Threads musa, Cambricon mlu, Enflame gcu, ...)
DEVICE_TYPES = frozenset({
    "cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "maia", "xla",
    "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone",
    "npu", "musa", "mlu", "gcu", "dipu", "sdaa",
})
#: devices with an autocast implementation
AUTOCAST_DEVICES = frozenset({"cpu", "cuda", "xpu", "mps", "hpu", "xla", "ipu", "mtia", "maia", "npu", "musa"})

#: ``torch.<name>`` -> the dtype kind amplint reasons about
DTYPES: dict[str, str] = {
    "float16": "float16", "half": "float16", "bfloat16": "bfloat16",
    **{n: "other" for n in ("float32", "float", "float64", "double", "int8", "int16", "int32", "int64", "long", "int",
                            "uint8", "bool", "complex64", "complex128", "cfloat", "cdouble", "short")},
}
FLOAT16 = frozenset({"torch.float16", "torch.half"})
BFLOAT16 = frozenset({"torch.bfloat16"})
AUTOCAST_DTYPE_NAMES = frozenset(n for n, k in DTYPES.items() if k in ("float16", "bfloat16"))
#: string spellings that mean fp16/bf16 in configuration values (``precision="16-mixed"``)
FP16_STRINGS = frozenset({"float16", "fp16", "half", "16", "16-mixed", "f16"})
BF16_STRINGS = frozenset({"bfloat16", "bf16", "bf16-mixed", "bf16-true"})


def dtype_kind(qual: str | None) -> str | None:
    """``"float16"`` | ``"bfloat16"`` | ``"other"`` for a ``torch.<dtype>`` name, else None."""
    if qual is None or not qual.startswith("torch.") or qual.count(".") != 1:
        return None
    return DTYPES.get(qual[6:])


def default_autocast_dtype(device: str | None) -> str | None:
    return AUTOCAST_DEFAULT_DTYPE.get(device or "")


# --- the prefilter's evidence -----------------------------------------------------------------

#: byte patterns that evidence a GradScaler: its class name (constructor, annotation, import),
#: ``unscale_``, or a protocol method on a receiver whose name says scaler
SCALER_EVIDENCE = (
    rb"(?:" + b"|".join(n.encode() for n in sorted(SCALER_CLASS_NAMES)) + rb")"
    rb"|\.\s*unscale_\s*\(|[Ss][Cc][Aa][Ll][Ee][Rr]\w*\s*\.\s*(?:scale|step|update|unscale_)\b"
)
DEPRECATED_EVIDENCE = rb"(?:cuda|cpu)\s*\.\s*amp\b|(?:cuda|cpu)\s+import\s+\(?[\w\s,]*\bamp\b"

#: every name a star import from torch can bring in that the model reads
KNOWN_SYMBOLS = (frozenset(GRAD_SCALERS) | AUTOCAST | CUSTOM_FWD | CUSTOM_BWD | CLIP_FUNCTIONS | NO_GRAD
                 | SET_GRAD_ENABLED | ENABLE_GRAD | BCE | BCE_LOSS)
