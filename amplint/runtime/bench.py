"""`amplint bench`: FP32 vs float16 (autocast + GradScaler) vs bfloat16 (autocast) on one model.

Each mode runs in its own forked child (clean peak-memory counters, a CUDA context of its own)
with the same seeded model, data and optimizer (SGD with momentum), in a training loop
written the correct way:

- fp32: forward, backward, clip, step;
- fp16: forward under ``autocast(dtype=float16)``, ``scaler.scale(loss).backward()``,
  ``scaler.unscale_(opt)``, clip, ``scaler.step(opt)``, ``scaler.update()``;
- bf16: forward under ``autocast(dtype=bfloat16)``, backward, clip, step (no scaler).

Warm-up steps are excluded; timed steps are measured with CUDA events on a GPU and with
``time.perf_counter`` on CPU (where ops are synchronous). Peak memory is
``torch.cuda.max_memory_allocated`` on CUDA and the peak resident set size above the
pre-loop baseline on CPU (Linux ``VmHWM`` after resetting it through ``/proc/self/clear_refs``).

The functions that read results (speedups, the recommendation) import no torch.
"""

from __future__ import annotations

import importlib
import importlib.util
import math
import os
import re
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

MODES = ("fp32", "fp16", "bf16")
FASTER = 1.10  # an AMP mode must be at least this much faster than FP32 to be recommended
SLOWER = 0.95  # below this it is flagged as slower than FP32
LOSS_TOL = 0.05  # relative loss difference from FP32 (same step) beyond which a mode is not recommended
STEADY_CV = 0.15  # coefficient of variation of the timed steps above which the timing is not steady
LOSSES = ("auto", "cross_entropy", "mse", "l1", "bce_with_logits")
OPTIMIZERS = ("sgd", "adam", "adamw")


@dataclass
class BenchConfig:
    model: str | None = None  # MODULE:FACTORY (factory() -> nn.Module); default: the built-in ResNet-18
    input_shape: tuple[int, ...] | None = None  # per-sample shape; default (3, 224, 224) for the built-in model
    input_factory: str | None = None  # MODULE:FACTORY (factory(batch_size) -> inputs or (inputs, targets))
    batch_size: int = 32
    steps: int = 20
    warmup: int = 5
    modes: tuple[str, ...] = MODES
    seed: int = 0
    lr: float = 0.01
    momentum: float = 0.9
    max_norm: float = 1.0
    num_classes: int = 1000
    budget_s: float | None = 120.0  # per mode, timed phase; at least 2 steps are always timed
    extra_sys_path: list[str] = field(default_factory=list)
    loss: str = "auto"  # one of LOSSES, or MODULE:FUNCTION (fn(output, target) -> scalar loss)
    optimizer: str = "sgd"  # one of OPTIMIZERS, or MODULE:FACTORY (factory(params) -> optimizer)
    output: str | None = None  # which part of a tuple/dict output is the prediction (key or index)
    loss_tolerance: float = LOSS_TOL

    def optimizer_text(self) -> str:
        if self.optimizer == "sgd":
            return f"SGD lr {self.lr} momentum {self.momentum}"
        if self.optimizer in OPTIMIZERS:
            return f"{'Adam' if self.optimizer == 'adam' else 'AdamW'} lr {self.lr}"
        return self.optimizer

    def model_name(self) -> str:
        return self.model or "built-in ResNet-18"

    def shape(self) -> tuple[int, ...] | None:
        if self.input_factory:
            return None
        return self.input_shape or (3, 224, 224)


def parse_shape(text: str) -> tuple[int, ...]:
    try:
        shape = tuple(int(x) for x in re.split(r"[,x ]+", text.strip()) if x)
    except ValueError:
        raise ValueError(f"--input-shape expects integers like 3,224,224, got {text!r}") from None
    if not shape or any(d <= 0 for d in shape):
        raise ValueError(f"--input-shape expects positive integers, got {text!r}")
    return shape


def parse_choice_or_ref(text: str, choices: tuple[str, ...], option: str) -> str:
    value = text.strip()
    if value.lower() in choices:
        return value.lower()
    mod, sep, attr = value.partition(":")
    if sep and mod and attr:
        return value
    raise ValueError(f"{option} takes one of {', '.join(choices)} or MODULE:FUNCTION, got {text!r}")


def parse_modes(text: str) -> tuple[str, ...]:
    modes = tuple(m.strip().lower() for m in text.split(",") if m.strip())
    bad = [m for m in modes if m not in MODES]
    if bad or not modes:
        raise ValueError(f"--modes takes a comma-separated subset of {','.join(MODES)}, got {text!r}")
    return tuple(dict.fromkeys(modes))


def load_object(ref: str, extra_sys_path: list[str] | None = None) -> Callable[..., Any]:
    """``package.module:name`` or ``path/to/file.py:name``."""
    mod_name, sep, attr = ref.partition(":")
    if not sep or not mod_name or not attr:
        raise ValueError(f"expected MODULE:FACTORY, got {ref!r}")
    for p in reversed(extra_sys_path or []):
        if p not in sys.path:
            sys.path.insert(0, p)
    if mod_name.endswith(".py") or os.sep in mod_name:
        path = Path(mod_name)
        spec = importlib.util.spec_from_file_location(f"_amplint_bench_{path.stem}", path)
        if spec is None or spec.loader is None:
            raise ValueError(f"cannot load {path}")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    else:
        module = importlib.import_module(mod_name)
    obj = module
    for part in attr.split("."):
        obj = getattr(obj, part)
    if not callable(obj):
        raise ValueError(f"{ref} is not callable")
    return obj


def check_reference(ref: str, extra_sys_path: list[str] | None = None) -> None:
    """Load ``ref`` (in a child process) only to report a bad reference as a usage error."""
    load_object(ref, extra_sys_path)


# --- one mode (runs in a child; imports torch) ------------------------------------------------


def _proc_kb(key: str) -> int | None:
    try:
        with open("/proc/self/status", encoding="utf-8") as f:
            m = re.search(rf"^{key}:\s+(\d+) kB", f.read(), re.MULTILINE)
        return int(m.group(1)) if m else None
    except OSError:
        return None


def _reset_rss_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w", encoding="utf-8") as f:
            f.write("5")
        return True
    except OSError:
        return False


def select_output(out: Any, key: str | None = None) -> Any:
    """The prediction in a model's output: the tensor itself, ``key`` (or ``logits``, else the
    first tensor) of a dict-like output, item ``key`` (default 0) of a tuple or list."""
    import torch

    if isinstance(out, torch.Tensor):
        return out
    if isinstance(out, dict) or (hasattr(out, "keys") and hasattr(out, "__getitem__")):
        if key is not None:
            if key not in out:
                raise ValueError(f"the model output has no {key!r} (keys: {', '.join(map(str, out.keys()))})")
            return select_output(out[key])
        if "logits" in out:
            return select_output(out["logits"])
        for v in out.values():
            if isinstance(v, torch.Tensor) and v.is_floating_point():
                return v
        raise ValueError("the model output is a dict without a floating-point tensor: pass --output KEY")
    if isinstance(out, (tuple, list)) and out:
        idx = int(key) if key is not None and str(key).lstrip("-").isdigit() else 0
        return select_output(out[idx])
    raise ValueError(f"cannot find a tensor in the model output ({type(out).__name__}): pass --output KEY")


def make_loss(cfg: BenchConfig, target) -> Callable[[Any, Any], Any]:
    import torch
    import torch.nn.functional as F

    name = cfg.loss
    if ":" in name:
        fn = load_object(name, cfg.extra_sys_path)

        def custom(out, t):
            return fn(out, t)

        return custom
    if name == "auto":
        name = "cross_entropy" if target.dtype in (torch.int64, torch.int32, torch.int16, torch.uint8) else "mse"
    if name == "cross_entropy":
        return lambda out, t: F.cross_entropy(out.float(), t.long())
    if name == "mse":
        return lambda out, t: F.mse_loss(out.float(), t.float().reshape(out.shape))
    if name == "l1":
        return lambda out, t: F.l1_loss(out.float(), t.float().reshape(out.shape))
    if name == "bce_with_logits":
        return lambda out, t: F.binary_cross_entropy_with_logits(out.float(), t.float().reshape(out.shape))
    raise ValueError(f"unknown loss {name!r}")


def make_optimizer(cfg: BenchConfig, params):
    import torch

    if cfg.optimizer == "sgd":
        return torch.optim.SGD(params, lr=cfg.lr, momentum=cfg.momentum)
    if cfg.optimizer == "adam":
        return torch.optim.Adam(params, lr=cfg.lr)
    if cfg.optimizer == "adamw":
        return torch.optim.AdamW(params, lr=cfg.lr)
    return load_object(cfg.optimizer, cfg.extra_sys_path)(params)


def build_problem(cfg: BenchConfig, device: str):
    """The seeded model, one batch of inputs and targets on ``device``, and the loss function."""
    import torch

    torch.manual_seed(cfg.seed)
    if cfg.model:
        model = load_object(cfg.model, cfg.extra_sys_path)()
    else:
        from .resnet import resnet18

        model = resnet18(num_classes=cfg.num_classes)
    model = model.to(device).train()
    g = torch.Generator().manual_seed(cfg.seed + 1)
    if cfg.input_factory:
        data = load_object(cfg.input_factory, cfg.extra_sys_path)(cfg.batch_size)
        x, y = data if isinstance(data, (tuple, list)) else (data, None)
    else:
        x, y = torch.randn((cfg.batch_size, *cfg.shape()), generator=g), None
    x = x.to(device)
    if y is None:  # classification labels for (N, classes) outputs, regression targets otherwise
        was_training = model.training
        model.eval()
        with torch.no_grad():
            out = select_output(model(x[:1]), cfg.output)
        model.train(was_training)
        if out.dim() == 2 and out.shape[-1] > 1 and cfg.loss in ("auto", "cross_entropy"):
            y = torch.randint(0, out.shape[-1], (cfg.batch_size,), generator=g)
        else:
            y = torch.randn((cfg.batch_size, *out.shape[1:]), generator=g)
    y = y.to(device)
    return model, x, y, make_loss(cfg, y)


def run_mode(cfg: BenchConfig, mode: str, device: str) -> dict[str, Any]:
    """Train ``cfg.warmup + cfg.steps`` steps in ``mode``; return timings, memory, loss, scale."""
    import contextlib

    import torch

    res: dict[str, Any] = {"mode": mode, "status": "ok", "error": None}
    if device == "cuda":
        torch.backends.cudnn.benchmark = True
    if mode == "bf16" and device == "cuda" and not torch.cuda.is_bf16_supported():
        return {**res, "status": "unsupported", "error": "this GPU does not support bfloat16"}
    model, x, y, loss_fn = build_problem(cfg, device)
    opt = make_optimizer(cfg, model.parameters())
    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(mode)
    scaler = torch.amp.GradScaler(device) if mode == "fp16" else None
    params = list(model.parameters())
    init_scale = float(scaler.get_scale()) if scaler is not None else 0.0

    def autocast():
        return torch.autocast(device_type=device, dtype=dtype) if dtype is not None else contextlib.nullcontext()

    scale_values: list = []

    def step():
        opt.zero_grad(set_to_none=True)
        with autocast():
            out = select_output(model(x), cfg.output)
            loss = loss_fn(out, y)
        if scaler is not None:
            scaler.scale(loss).backward()
            scaler.unscale_(opt)
            torch.nn.utils.clip_grad_norm_(params, cfg.max_norm)
            scaler.step(opt)
            scaler.update()
            s = getattr(scaler, "_scale", None)
            scale_values.append(s.detach().clone() if isinstance(s, torch.Tensor) else scaler.get_scale())
        else:
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, cfg.max_norm)
            opt.step()
        return loss.detach()

    cuda = device == "cuda"
    losses = []
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        mem_kind = "torch.cuda.max_memory_allocated"
    else:
        mem_kind = "peak RSS above the pre-loop baseline" if _reset_rss_peak() else "peak RSS (process)"
    base_kb = _proc_kb("VmRSS") if not cuda else None
    try:
        for _ in range(cfg.warmup):
            losses.append(step())
        if cuda:
            torch.cuda.synchronize()
        times: list[float] = []
        events = []
        budget_hit = False
        t_start = time.perf_counter()
        for i in range(cfg.steps):
            if cuda:
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                losses.append(step())
                end.record()
                events.append((start, end))
            else:
                t0 = time.perf_counter()
                losses.append(step())
                times.append(time.perf_counter() - t0)
            if cfg.budget_s and i + 1 >= 2 and i + 1 < cfg.steps and time.perf_counter() - t_start > cfg.budget_s:
                budget_hit = True
                break
        if cuda:
            torch.cuda.synchronize()
            times = [s.elapsed_time(e) / 1000.0 for s, e in events]
    except torch.cuda.OutOfMemoryError as e:
        return {**res, "status": "error", "error": f"out of memory: {str(e).splitlines()[0]}"}
    if cuda:
        peak = int(torch.cuda.max_memory_allocated())
    else:
        hwm = _proc_kb("VmHWM")
        peak = max(0, (hwm - (base_kb or 0))) * 1024 if hwm is not None else None
    loss_values = [float(v) for v in losses]
    scales = [float(v) for v in scale_values]
    skipped = sum(1 for a, b in zip([None, *scales], scales) if a is not None and b < a)
    if scales and scales[0] < init_scale:
        skipped += 1  # the first update backed off from the initial scale
    res.update(_timing_stats(times, cfg.batch_size))
    res.update({
        "steps_timed": len(times), "warmup": cfg.warmup, "budget_hit": budget_hit,
        "peak_mem_bytes": peak, "mem_kind": mem_kind,
        "final_loss": loss_values[-1] if loss_values else None, "losses": loss_values,
        "skipped_steps": skipped if scaler is not None else None,
        "final_scale": scales[-1] if scales else None,
        "total_steps": len(loss_values),
    })
    return res


def _timing_stats(times: list[float], batch_size: int) -> dict[str, Any]:
    if not times:
        return {"step_s": [], "median_s": None, "p25_s": None, "p75_s": None, "min_s": None, "max_s": None,
                "images_per_s": None, "mean_s": None, "cv": None, "drift": None}
    ts = sorted(times)
    med = statistics.median(ts)
    mean = statistics.fmean(ts)
    cv = statistics.pstdev(ts) / mean if len(ts) > 1 and mean > 0 else None
    half = len(times) // 2
    drift = (statistics.median(times[half:]) / statistics.median(times[:half])
             if half >= 1 and statistics.median(times[:half]) > 0 else None)
    return {
        "step_s": times, "median_s": med, "p25_s": _quantile(ts, 0.25), "p75_s": _quantile(ts, 0.75),
        "min_s": ts[0], "max_s": ts[-1], "images_per_s": batch_size / med if med > 0 else None,
        "mean_s": mean, "cv": cv, "drift": drift,
    }


def _quantile(sorted_values: list[float], q: float) -> float:
    if len(sorted_values) == 1:
        return sorted_values[0]
    pos = q * (len(sorted_values) - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


# --- reading the results (no torch) -----------------------------------------------------------


def compare(results: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Speedup, memory ratio and final-loss difference of each mode against FP32."""
    ref = results.get("fp32")
    out = {}
    for mode, r in results.items():
        c: dict[str, Any] = {"speedup": None, "mem_ratio": None, "loss_rel_diff": None, "loss_compared_at": None}
        if ref and ref.get("status") == "ok" and r.get("status") == "ok":
            if ref.get("median_s") and r.get("median_s"):
                c["speedup"] = ref["median_s"] / r["median_s"]
            if ref.get("peak_mem_bytes") and r.get("peak_mem_bytes") is not None:
                c["mem_ratio"] = r["peak_mem_bytes"] / ref["peak_mem_bytes"]
            # same step for both (a time budget can end one mode earlier than the other)
            la, lb = r.get("losses") or [], ref.get("losses") or []
            if la and lb:
                k = min(len(la), len(lb))
                a, b = la[k - 1], lb[k - 1]
                c["loss_compared_at"] = k
            else:
                a, b = r.get("final_loss"), ref.get("final_loss")
                c["loss_compared_at"] = r.get("total_steps")
            if a is not None and b is not None and math.isfinite(b) and b != 0:
                c["loss_rel_diff"] = abs(a - b) / abs(b) if math.isfinite(a) else math.inf
        out[mode] = c
    return out


def _x(v: float | None) -> str:
    return "?" if v is None else f"{v:.2f}x"


def recommend(results: dict[str, dict[str, Any]], hardware: dict[str, Any], device: str,
              loss_tolerance: float = LOSS_TOL, steady_cv: float = STEADY_CV) -> dict[str, Any]:
    """Which mode to use, why, and what looked wrong. Pure function of the measurements.

    Only a mode that ran is ever recommended, and an AMP mode only against an FP32 baseline that
    ran: its speedup, and its loss within ``loss_tolerance`` of FP32's at the same step (a mode
    outside it is not recommended, however fast)."""
    comp = compare(results)
    flags: list[str] = []
    usable: dict[str, float] = {}
    rejected: dict[str, str] = {}
    for mode, r in results.items():
        if r.get("status") != "ok":
            flags.append(f"{mode} did not run: {r.get('error') or r.get('status')}")
            continue
        loss = r.get("final_loss")
        if loss is None or not math.isfinite(loss):
            flags.append(f"{mode}: the final loss is not finite ({loss})")
            rejected[mode] = "its loss was not finite"
            continue
        cv = r.get("cv")
        if cv is not None and cv > steady_cv:
            drift = r.get("drift")
            flags.append(f"{mode}: step times are not steady (coefficient of variation {cv:.0%} over "
                         f"{r.get('steps_timed')} timed steps, median {_ms(r.get('median_s'))}"
                         + (f", second half {drift:.2f}x the first" if drift else "")
                         + "): more --warmup or --steps, or a quieter machine")
        c = comp[mode]
        if mode != "fp32":
            sp = c["speedup"]
            if sp is not None and sp < SLOWER:
                flags.append(f"{mode} is slower than FP32 ({_x(sp)}): AMP does not pay off here"
                             + (" (CPU autocast without native half-precision kernels, or a small model)"
                                if device == "cpu" else " (a small or CPU-bound model, or launch overhead)"))
            if c["loss_rel_diff"] is not None and c["loss_rel_diff"] > loss_tolerance:
                flags.append(f"{mode}: the loss differs from FP32's by {c['loss_rel_diff']:.1%} after "
                             f"{c['loss_compared_at']} steps, beyond the tolerance of {loss_tolerance:.1%}: "
                             "not recommended; check the numerics on real data")
                rejected[mode] = f"its loss differs from FP32's by {c['loss_rel_diff']:.1%}"
                continue
            if mode == "fp16" and r.get("skipped_steps") and r.get("total_steps"):
                if r["skipped_steps"] > 0.5 * r["total_steps"]:
                    flags.append(f"fp16: {r['skipped_steps']} of {r['total_steps']} steps were skipped by the "
                                 "GradScaler (inf/NaN gradients); the scale is still calibrating or the model "
                                 "overflows fp16")
                    rejected[mode] = f"the GradScaler skipped {r['skipped_steps']} of {r['total_steps']} steps"
                    continue
        if r.get("budget_hit"):
            flags.append(f"{mode}: only {r.get('steps_timed')} steps were timed (time budget reached)")
        usable[mode] = c["speedup"] if mode != "fp32" else 1.0
    if device == "cuda" and "bf16" in results and hardware.get("bf16_supported") is False:
        flags.append("this GPU has no bfloat16 support: use fp16 with a GradScaler for AMP")
    if device == "cuda" and hardware.get("tf32_matmul") is False and "fp32" in usable:
        flags.append("TF32 matmuls are off: FP32 could be faster on Ampere or newer with "
                     "torch.backends.cuda.matmul.allow_tf32 = True")

    fp32 = results.get("fp32")
    if fp32 is None or fp32.get("status") != "ok" or "fp32" not in usable:
        why = ("FP32 was not among the modes run" if fp32 is None else
               "FP32 did not run" if fp32.get("status") != "ok" else f"FP32 {rejected.get('fp32', 'failed')}")
        ran = ", ".join(m for m, r in results.items() if r.get("status") == "ok") or "none"
        return {"mode": None, "text": f"No recommendation: {why}, so there is no baseline for the speedups and the "
                                      f"loss check (modes that ran: {ran}). Run with --modes fp32,... to compare.",
                "flags": flags}
    amp = {m: s for m, s in usable.items() if m != "fp32" and s is not None}
    faster = {m: s for m, s in amp.items() if s >= FASTER}
    mem = {m: comp[m]["mem_ratio"] for m in results}

    def mem_text(m: str) -> str:
        return f", peak memory {_x(mem[m])} of FP32" if mem.get(m) is not None else ""

    not_rec = "".join(f" {m} was not recommended: {why}." for m, why in sorted(rejected.items()) if m != "fp32")
    if not faster:
        tried = ", ".join(f"{m} {_x(s)}" for m, s in sorted(amp.items())) or "no AMP mode qualified"
        text = (f"Stay with FP32: no AMP mode was at least {int(round((FASTER - 1) * 100))}% faster here "
                f"({tried} of FP32 throughput).{not_rec}")
        if device == "cpu":
            text += (" On CPU, autocast mostly helps on processors with native bfloat16 matrix units; "
                     "measure again on the GPU you train on.")
        return {"mode": "fp32", "text": text, "flags": flags}
    bf16_ok = "bf16" in faster and (device != "cuda" or hardware.get("bf16_supported", True))
    if bf16_ok and ("fp16" not in faster or faster["bf16"] >= 0.9 * faster["fp16"]):
        text = (f"Use bf16 autocast without a GradScaler: {_x(faster['bf16'])} FP32 throughput{mem_text('bf16')}. "
                "bfloat16 keeps FP32's exponent range, so no loss scaling is needed and no step is skipped.")
        if "fp16" in faster:
            text += f" fp16 was {_x(faster['fp16'])}, not enough faster to be worth the GradScaler."
        return {"mode": "bf16", "text": text + not_rec, "flags": flags}
    best = "fp16" if "fp16" in faster else max(faster, key=lambda m: faster[m])
    text = (f"Use fp16 autocast with a GradScaler (scale, unscale_ before clipping, step, update): "
            f"{_x(faster[best])} FP32 throughput{mem_text(best)}.")
    if "bf16" in amp:
        text += f" bf16 reached {_x(amp['bf16'])}."
    elif device == "cuda" and hardware.get("bf16_supported") is False:
        text += " This GPU has no bfloat16."
    return {"mode": best, "text": text + not_rec, "flags": flags}


# --- output -----------------------------------------------------------------------------------


def _ms(v: float | None) -> str:
    if v is None:
        return "-"
    return f"{v * 1000:.1f} ms" if v < 1 else f"{v:.2f} s"


def _mib(v: int | None) -> str:
    return "-" if v is None else f"{v / 2**20:.0f} MiB"


def table_rows(results: dict[str, dict[str, Any]]) -> list[list[str]]:
    comp = compare(results)
    rows = [["mode", "step (median, p25-p75)", "cv", "images/s", "speedup", "peak memory", "final loss",
             "Δloss vs fp32", "skipped / scale"]]
    for mode, r in results.items():
        if r.get("status") != "ok":
            rows.append([mode, r.get("status", "?"), "-", "-", "-", "-", "-", "-", (r.get("error") or "")[:40]])
            continue
        c = comp[mode]
        step = f"{_ms(r['median_s'])} ({_ms(r['p25_s'])}-{_ms(r['p75_s'])})"
        if r.get("budget_hit"):
            step += f" [{r['steps_timed']} steps]"
        loss = r.get("final_loss")
        rows.append([
            mode, step, f"{r['cv']:.0%}" if r.get("cv") is not None else "-",
            f"{r['images_per_s']:.1f}" if r.get("images_per_s") else "-",
            _x(c["speedup"]) if mode != "fp32" else "1.00x", _mib(r.get("peak_mem_bytes")),
            f"{loss:.4g}" if loss is not None else "-",
            f"{c['loss_rel_diff']:+.1%}".replace("+", "") if c["loss_rel_diff"] is not None and mode != "fp32" else "-",
            f"{r['skipped_steps']} / {r['final_scale']:.0f}" if mode == "fp16" and r.get("final_scale") else "-",
        ])
    return rows


def render_table(results: dict[str, dict[str, Any]]) -> str:
    rows = table_rows(results)
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for k, row in enumerate(rows):
        lines.append("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def hardware_lines(hw: dict[str, Any], device: str) -> list[str]:
    if device == "cuda":
        lines = [f"device: {hw.get('device_name')} (compute capability {hw.get('capability')}, "
                 f"{hw.get('memory_gib')} GiB), CUDA {hw.get('cuda_version')}, torch {hw.get('torch')}",
                 f"bf16 supported: {'yes' if hw.get('bf16_supported') else 'no'}; TF32 matmul: "
                 f"{'on' if hw.get('tf32_matmul') else 'off'}, TF32 cuDNN: {'on' if hw.get('tf32_cudnn') else 'off'}; "
                 f"float32 matmul precision: {hw.get('float32_matmul_precision')}"]
    else:
        lines = [f"device: CPU {hw.get('cpu')} ({hw.get('cpu_count')} cores, {hw.get('cpu_threads')} torch threads, "
                 f"{hw.get('cpu_capability')}), torch {hw.get('torch')}",
                 f"autocast on CPU: float16 {'yes' if hw.get('fp16_cpu_autocast') else 'no'}, bfloat16 "
                 f"{'yes' if hw.get('bf16_cpu_autocast') else 'no'}; no GPU"
                 + ("" if not hw.get("cuda_available") else " used (CUDA is available: --device cuda)")]
    return lines


def to_json(cfg: BenchConfig, device: str, hw: dict[str, Any], results: dict[str, dict[str, Any]],
            rec: dict[str, Any]) -> dict[str, Any]:
    from .. import __version__
    from .trace import jsonable

    comp = compare(results)
    return jsonable({
        "tool": "amplint bench", "version": __version__, "device": device, "hardware": hw,
        "config": {**asdict(cfg), "model": cfg.model_name(), "input_shape": cfg.shape()},
        "results": {m: {**r, **comp[m]} for m, r in results.items()},
        "recommendation": rec,
    })


def render_markdown(cfg: BenchConfig, device: str, hw: dict[str, Any], results: dict[str, dict[str, Any]],
                    rec: dict[str, Any]) -> str:
    lines = ["# amplint bench report", ""]
    lines += [f"- {line}" for line in hardware_lines(hw, device)]
    shape = cfg.shape()
    lines.append(f"- model: {cfg.model_name()}; input: "
                 + (f"synthetic {'x'.join(map(str, shape))}" if shape else f"from {cfg.input_factory}")
                 + f"; batch {cfg.batch_size}; {cfg.warmup} warm-up + {cfg.steps} timed steps; "
                 f"{cfg.optimizer_text()}; loss {cfg.loss}" + (f" on output {cfg.output!r}" if cfg.output else "")
                 + f"; clip {cfg.max_norm}; seed {cfg.seed}; loss tolerance {cfg.loss_tolerance:.1%}; "
                 f"steady-state check: step-time CV <= {STEADY_CV:.0%}")
    rows = table_rows(results)
    lines += ["", "| " + " | ".join(rows[0]) + " |", "|" + "---|" * len(rows[0])]
    lines += ["| " + " | ".join(r) + " |" for r in rows[1:]]
    lines += ["", f"**Recommendation ({rec['mode'] or 'none'})**: {rec['text']}", ""]
    for f in rec["flags"]:
        lines.append(f"- {f}")
    mem_kinds = sorted({r.get("mem_kind") for r in results.values() if r.get("mem_kind")})
    if mem_kinds:
        lines += ["", f"Peak memory: {', '.join(mem_kinds)}."]
    return "\n".join(lines).rstrip() + "\n"


def write_plot(results: dict[str, dict[str, Any]], path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    modes = [m for m, r in results.items() if r.get("status") == "ok"]
    colors = {"fp32": "#7f8c8d", "fp16": "#c0392b", "bf16": "#2471a3"}
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(8.4, 3.4))
    ips = [results[m].get("images_per_s") or 0 for m in modes]
    mem = [(results[m].get("peak_mem_bytes") or 0) / 2**20 for m in modes]
    a1.bar(modes, ips, color=[colors.get(m, "#555") for m in modes])
    a1.set_title("throughput (images/s)")
    for i, v in enumerate(ips):
        a1.text(i, v, f"{v:.1f}", ha="center", va="bottom", fontsize=8)
    a2.bar(modes, mem, color=[colors.get(m, "#555") for m in modes])
    a2.set_title("peak memory (MiB)")
    for i, v in enumerate(mem):
        a2.text(i, v, f"{v:.0f}", ha="center", va="bottom", fontsize=8)
    for ax in (a1, a2):
        ax.grid(axis="y", alpha=0.3)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
