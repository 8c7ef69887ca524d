"""Facts about the torch install and the device, gathered in a forked child.

The parent process must never initialise CUDA (its children could not use it after a fork),
so even ``torch.cuda.is_available()`` runs in a child.
"""

from __future__ import annotations

import platform
import warnings
from typing import Any


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "CPU"


def _autocast_enabled(torch, device: str, dtype) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            ac = torch.autocast(device, dtype=dtype)
        except Exception:  # noqa: BLE001
            return False
        return bool(getattr(ac, "_enabled", False))


def probe() -> dict[str, Any]:
    """Runs in a child: torch version, CUDA, fp16/bf16 autocast support, TF32 state."""
    import os

    import torch

    info: dict[str, Any] = {
        "torch": torch.__version__,
        "python": platform.python_version(),
        "cpu": cpu_name(),
        "cpu_count": os.cpu_count(),
        "cpu_threads": torch.get_num_threads(),
        "cpu_capability": _safe(lambda: torch.backends.cpu.get_cpu_capability()),
        "fp16_cpu_autocast": _autocast_enabled(torch, "cpu", torch.float16),
        "bf16_cpu_autocast": _autocast_enabled(torch, "cpu", torch.bfloat16),
        "cuda_available": bool(torch.cuda.is_available()),
        "cuda_version": torch.version.cuda,
    }
    if info["cuda_available"]:
        props = torch.cuda.get_device_properties(0)
        info.update({
            "device_name": torch.cuda.get_device_name(0),
            "capability": "%d.%d" % torch.cuda.get_device_capability(0),
            "bf16_supported": bool(_safe(lambda: torch.cuda.is_bf16_supported(), False)),
            "memory_gib": round(props.total_memory / 2**30, 1),
            "device_count": torch.cuda.device_count(),
        })
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        info["tf32_matmul"] = _safe(lambda: bool(torch.backends.cuda.matmul.allow_tf32))
        info["tf32_cudnn"] = _safe(lambda: bool(torch.backends.cudnn.allow_tf32))
        info["float32_matmul_precision"] = _safe(lambda: torch.get_float32_matmul_precision())
    return info


def _safe(fn, default=None):
    try:
        return fn()
    except Exception:  # noqa: BLE001
        return default


def describe(info: dict[str, Any], device: str) -> str:
    if device == "cuda":
        return f"{info.get('device_name', 'CUDA device')} (sm {info.get('capability', '?')}), torch {info.get('torch')}"
    return f"CPU {info.get('cpu')} ({info.get('cpu_count')} cores, {info.get('cpu_capability')}), torch {info.get('torch')}"
