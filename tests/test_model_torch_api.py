"""The torch API as data (amplint/torch_api.py): one source of truth for every layer."""

from __future__ import annotations

import subprocess
import sys

import pytest

from amplint import prefilter, screen
from amplint import torch_api as T
from amplint.model import names as N


def test_no_libcst_and_fast_to_import():
    code = "import sys, amplint.torch_api; print('libcst' in sys.modules, 'dataclasses' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "False"]


@pytest.mark.parametrize(
    "qual, family, first",
    [
        ("torch.amp.GradScaler", "device_first", "device"),
        ("torch.GradScaler", "device_first", "device"),
        ("torch.cuda.amp.GradScaler", "init_scale_first", "init_scale"),
        ("torch.cpu.amp.grad_scaler.GradScaler", "init_scale_first", "init_scale"),
        ("torch.distributed.fsdp.ShardedGradScaler", "sharded", "device"),
    ],
)
def test_scaler_signatures(qual, family, first):
    spec = T.scaler_spec(qual)
    assert spec.family == family and spec.params[0] == first
    assert spec.deprecated == qual.startswith(("torch.cuda.", "torch.cpu."))


def test_sharded_scaler_swaps_growth_and_backoff():
    assert T.SHARDED.index("backoff_factor") < T.SHARDED.index("growth_factor")
    assert T.DEVICE_FIRST.index("growth_factor") < T.DEVICE_FIRST.index("backoff_factor")


def test_scaler_class_by_last_name_only_for_scaler_names():
    assert T.is_scaler_class("mypkg.amp.GradScaler")
    assert not T.is_scaler_class("sklearn.preprocessing.StandardScaler")
    assert not T.is_scaler_class(None)


def test_deprecations_and_replacements():
    dep, exact = T.deprecation("torch.cuda.amp.autocast")
    assert (dep.symbol, dep.device, exact) == ("autocast", "cuda", True)
    assert dep.replacement == 'torch.amp.autocast("cuda", ...)'
    dep, exact = T.deprecation("torch.cuda.amp.GradScaler.unscale_")
    assert (dep.symbol, exact) == ("GradScaler", False)
    assert T.deprecation("torch.cpu.amp.custom_fwd") is None  # torch.cpu.amp has no custom_fwd
    assert T.DEPRECATED["torch.cuda.amp.custom_bwd"].replacement == 'torch.amp.custom_bwd(device_type="cuda")'
    assert T.OLD_PARAMS["autocast"] == ("enabled", "dtype", "cache_enabled")
    assert T.AUTOCASTS["torch.autocast"].params[:3] == ("device_type", "dtype", "enabled")


def test_dtypes_and_devices():
    assert T.dtype_kind("torch.half") == "float16"
    assert T.dtype_kind("torch.bfloat16") == "bfloat16"
    assert T.dtype_kind("torch.float32") == "other"
    assert T.dtype_kind("numpy.float16") is None
    assert T.default_autocast_dtype("cuda") == "float16"
    assert T.default_autocast_dtype("cpu") == "bfloat16"
    assert T.default_autocast_dtype("mps") is None  # not measured: unknown
    assert {"cuda", "cpu", "npu"} <= T.DEVICE_TYPES and "gpu" not in T.DEVICE_TYPES
    assert T.AUTOCAST_DEVICES <= T.DEVICE_TYPES


def test_optimizers():
    assert T.is_optimizer_class("torch.optim.AdamW")
    assert T.is_optimizer_class("apex.optimizers.FusedAdam")
    assert not T.is_optimizer_class("torch.optim.lr_scheduler.StepLR")
    assert not T.is_optimizer_class("torch.optim.swa_utils.AveragedModel")
    assert T.optimizer_like_name("self.opt_g") and T.optimizer_like_name("optimizer")
    assert not T.optimizer_like_name("optimizer_scheduler") and not T.optimizer_like_name("optim_wrapper")
    # an item of a container named for optimizers, not the container itself
    assert T.optimizer_like_name("opts['G']") and T.optimizer_like_name("self.optimizers[name]")
    assert not T.optimizer_like_name("opts") and not T.optimizer_like_name("self.schedulers[name]")


def test_layers_share_the_data():
    """The prefilter, the AST screen and the model read the same sets (no private copies)."""
    assert prefilter._SCALER_USE is T.SCALER_EVIDENCE
    assert screen._KNOWN_DEVICES is T.DEVICE_TYPES
    assert screen._ARG_KEYWORDS == frozenset(T.AUTOCAST_PARAMS)
    assert N.CLIP_FUNCTIONS is T.CLIP_FUNCTIONS and N.AUTOCAST is T.AUTOCAST
    assert N.is_grad_scaler_ctor is T.is_scaler_class


def test_scaler_method_arguments():
    """The calls a GradScaler method could be, by its signature."""
    assert T.fits_scaler_method("update", 0, []) and T.fits_scaler_method("update", 1, [])
    assert T.fits_scaler_method("update", 0, ["new_scale"]) and T.fits_scaler_method("step", 3, ["closure"])
    assert not T.fits_scaler_method("update", 0, ["layout"])  # ``kwargs.update(layout=layout)``
    assert not T.fits_scaler_method("update", 2, [])  # ``hasher.update(a, b)``
    assert not T.fits_scaler_method("scale", 2, []) and not T.fits_scaler_method("unscale_", 1, ["opt"])
    assert T.fits_scaler_method("update", 0, [], starred=True)  # ``x.update(**kw)``: could be
