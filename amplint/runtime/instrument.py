"""Run one training loop (``train(model, optimizer, batches, device)``) and record it from outside.

Runs in a forked child (see ``isolate.py``), so the patches installed here (``GradScaler``'s
methods, global optimizer step hooks, clipping functions, ``lr_scheduler`` steps, autocast
regions, the ``warnings`` filters of the loop's own file) affect that run only. The loop needs
nothing but ``train(...)``; its problem (model, optimizer, batches) is the harness's standard one
(``problem.py``) or the user's ``make_problem(device, seed)``.

Run modes:

- ``amp``: the loop as written;
- ``fp32``: the FP32 reference of the same problem: every autocast region and every GradScaler is
  built disabled (a disabled scaler is a pass-through: ``scale`` returns its input, ``step`` calls
  ``optimizer.step()``), so the loop computes in float32 and nothing is scaled.

Options: ``emulate_cuda_autocast`` applies CUDA autocast's op policy inside float16 CPU autocast
regions (each op that CUDA autocast registers a kernel for is first passed to that kernel, which
is how a CUDA run refuses ``binary_cross_entropy``); ``record_ops`` counts the aten ops by phase,
name and dtype (a dispatch mode, for the backward-precision and per-step-cost checks).
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import itertools
import math
import os
import sys
import tempfile
import time
import traceback
import warnings
from pathlib import Path
from typing import Any

from .trace import AMP, ERROR, FP32, OK, RAISED, Step, Trace

MAX_WARNINGS = 200
GRAD_DETAIL_STEPS = 3  # per-tensor gradient norms are kept for the first steps of each optimizer



class Recorder:
    """Installs the patches and hooks that fill one :class:`Trace`."""

    def __init__(self, torch, *, mode: str = AMP, emulate_cuda_autocast: bool = False, record_ops: bool = False,
                 loop_file: str | None = None) -> None:
        self.torch = torch
        self.mode = mode
        self.emulate = emulate_cuda_autocast
        self.record_ops = record_ops
        self.loop_file = os.path.realpath(loop_file) if loop_file else None
        self.trace = Trace(mode=mode)
        self.t0 = time.perf_counter()
        self._in_scaler_step: dict[str, Any] | None = None
        self._plain: dict[int, tuple[list, dict]] = {}
        self._opt_index: dict[int, int] = {}
        self._per_opt_steps: dict[int, int] = {}
        self._detailed: dict[int, int] = {}
        self._undo: list = []
        self._handles: list = []
        self._clip_depth = 0
        self._sched_depth = 0
        self._regions: dict[tuple, int] = {}
        self._ops: dict[str, dict[str, int]] = {"forward": {}, "backward": {}}
        self._op_mode = None
        self._banned: list[str] = []
        self._current_scale: float | None = None

    # --- helpers ------------------------------------------------------------------------

    @staticmethod
    def _params(optimizer) -> list:
        return [p for g in optimizer.param_groups for p in g["params"]]

    def _opt(self, optimizer) -> int:
        return self._opt_index.setdefault(id(optimizer), len(self._opt_index))

    def _grad_stats(self, optimizer) -> dict[str, Any]:
        torch = self.torch
        sq, zeros, total, seen, nonfinite = 0.0, 0, 0, False, False
        per: list[float] = []
        detail = self._detailed.get(id(optimizer), 0) < GRAD_DETAIL_STEPS
        if detail:
            self._detailed[id(optimizer)] = self._detailed.get(id(optimizer), 0) + 1
        with torch.no_grad():
            for p in self._params(optimizer):
                g = p.grad
                if g is None:
                    if detail:
                        per.append(math.nan)
                    continue
                seen = True
                g = g.detach().double()
                finite = torch.isfinite(g)
                if not bool(finite.all()):
                    nonfinite = True
                    g = torch.where(finite, g, torch.zeros_like(g))
                n2 = float(g.pow(2).sum())
                sq += n2
                if detail:
                    per.append(math.sqrt(n2))
                zeros += int((g == 0).sum())
                total += g.numel()
        if not seen:
            return {"grad_norm": None, "zero": None, "per": None, "nonfinite": False}
        return {"grad_norm": math.sqrt(sq), "zero": zeros / total if total else None, "per": per if detail else None,
                "nonfinite": nonfinite}

    def _delta(self, params, before) -> tuple[bool, float, bool]:
        torch = self.torch
        changed, sq, nonfinite = False, 0.0, False
        with torch.no_grad():
            for p, b in zip(params, before):
                a = p.detach()
                if not torch.equal(a, b):
                    changed = True
                    d = (a.double() - b.double())
                    d = d[torch.isfinite(d)]
                    sq += float(d.pow(2).sum())
                if not bool(torch.isfinite(a).all()):
                    nonfinite = True
        return (not changed), math.sqrt(sq), nonfinite

    @staticmethod
    def _snapshot(params) -> list:
        return [p.detach().clone() for p in params]

    @staticmethod
    def _lr(optimizer) -> float | None:
        try:
            lr = optimizer.param_groups[0].get("lr")
            return float(lr) if lr is not None else None
        except (AttributeError, IndexError, TypeError, ValueError, RuntimeError):
            return None

    def _now(self) -> float:
        return time.perf_counter() - self.t0

    def _patch(self, owner, name: str, fn) -> None:
        self._undo.append((owner, name, getattr(owner, name)))
        setattr(owner, name, fn)

    def _from_loop(self) -> bool:
        """Is the caller of the patched function the loop's own file?"""
        if not self.loop_file:
            return False
        try:
            return os.path.realpath(sys._getframe(2).f_code.co_filename) == self.loop_file
        except (ValueError, AttributeError):
            return False

    # --- install / remove ---------------------------------------------------------------

    def install(self) -> None:
        self._install_scaler()
        self._install_optimizer_hooks()
        self._install_clipping()
        self._install_schedulers()
        self._install_autocast()
        self._install_warning_guard()
        if self.record_ops:
            self._op_mode = self._make_op_recorder()
            self._op_mode.__enter__()

    def remove(self) -> None:
        if self._op_mode is not None:
            with contextlib.suppress(Exception):
                self._op_mode.__exit__(None, None, None)
            self._op_mode = None
            self.trace.ops = {"forward": dict(self._ops["forward"]), "backward": dict(self._ops["backward"])}
        for owner, name, fn in reversed(self._undo):
            setattr(owner, name, fn)
        self._undo.clear()
        for h in self._handles:
            h.remove()
        self._handles.clear()
        self.trace.autocast = [{"device": d, "dtype": dt, "enabled": en, "count": n}
                               for (d, dt, en), n in self._regions.items()]

    def _install_scaler(self) -> None:
        torch = self.torch
        GS = torch.amp.GradScaler
        rec = self
        orig = {name: getattr(GS, name) for name in ("__init__", "step", "update", "scale")}

        def __init__(self, *args, **kwargs):
            orig["__init__"](self, *args, **kwargs)
            if rec.mode == FP32:
                self._enabled = False
            try:
                info = {"enabled": bool(self.is_enabled()), "device": str(getattr(self, "_device", "?")),
                        "init_scale": float(getattr(self, "_init_scale", math.nan) or math.nan),
                        "growth_factor": float(getattr(self, "_growth_factor", math.nan) or math.nan),
                        "at": len(rec.trace.steps), "cls": type(self).__name__}
            except Exception:  # noqa: BLE001 - recording must never break the loop
                info = {"enabled": False, "at": len(rec.trace.steps)}
            rec.trace.scalers.append(info)

        def step(self, optimizer, *args, **kwargs):
            params = rec._params(optimizer)
            before = rec._snapshot(params)
            enabled = bool(self.is_enabled())
            try:
                scale = float(self.get_scale()) if enabled else None
            except Exception:  # noqa: BLE001
                scale = None
            outer = rec._in_scaler_step
            rec._in_scaler_step = {"grad_norm": None, "zero": None, "per": None, "nonfinite": False}
            lr = rec._lr(optimizer)
            try:
                out = orig["step"](self, optimizer, *args, **kwargs)
            finally:
                info, rec._in_scaler_step = rec._in_scaler_step, outer
            found = None
            if enabled:
                try:
                    state = self._per_optimizer_states[id(optimizer)]
                    found = any(float(v) > 0 for v in state["found_inf_per_device"].values())
                except Exception:  # noqa: BLE001
                    found = None
            unchanged, norm, nonfinite = rec._delta(params, before)
            idx = rec._opt(optimizer)
            rec._per_opt_steps[id(optimizer)] = rec._per_opt_steps.get(id(optimizer), 0) + 1
            rec.trace.steps.append(Step("scaler", unchanged, norm, info["grad_norm"], info["zero"], nonfinite, scale,
                                        found, lr, len(rec.trace.sched), rec._now(), idx, info["per"],
                                        info["nonfinite"]))
            return out

        def update(self, *args, **kwargs):
            out = orig["update"](self, *args, **kwargs)
            try:
                rec.trace.scales.append(float(self.get_scale()))
                rec.trace.updates.append(len(rec.trace.steps))
            except Exception:  # noqa: BLE001
                pass
            return out

        def scale(self, outputs):
            out = orig["scale"](self, outputs)
            try:
                rec._current_scale = float(self.get_scale()) if self.is_enabled() else None
                if isinstance(outputs, torch.Tensor) and outputs.numel() == 1:
                    rec.trace.scaled.append((float(outputs.detach().float()), float(self.get_scale())))
            except Exception:  # noqa: BLE001
                pass
            return out

        for name, fn in (("__init__", __init__), ("step", step), ("update", update), ("scale", scale)):
            self._patch(GS, name, fn)

    def _install_optimizer_hooks(self) -> None:
        from torch.optim.optimizer import register_optimizer_step_post_hook, register_optimizer_step_pre_hook

        rec = self

        def pre(optimizer, args, kwargs):
            stats = rec._grad_stats(optimizer)
            if rec._in_scaler_step is not None:
                rec._in_scaler_step.update(stats)
            else:
                rec._plain[id(optimizer)] = (rec._snapshot(rec._params(optimizer)), {**stats, "lr": rec._lr(optimizer)})

        def post(optimizer, args, kwargs):
            if rec._in_scaler_step is not None:
                return
            snap = rec._plain.pop(id(optimizer), None)
            if snap is None:
                return
            unchanged, norm, nonfinite = rec._delta(rec._params(optimizer), snap[0])
            s = snap[1]
            idx = rec._opt(optimizer)
            rec._per_opt_steps[id(optimizer)] = rec._per_opt_steps.get(id(optimizer), 0) + 1
            rec.trace.steps.append(Step("optimizer", unchanged, norm, s["grad_norm"], s["zero"], nonfinite, None, None,
                                        s["lr"], len(rec.trace.sched), rec._now(), idx, s["per"], s["nonfinite"]))

        self._handles += [register_optimizer_step_pre_hook(pre), register_optimizer_step_post_hook(post)]

    def _install_clipping(self) -> None:
        torch = self.torch
        rec = self
        import torch.nn.utils.clip_grad as cg

        def wrap(name, orig):
            def fn(*args, **kwargs):
                rec._clip_depth += 1
                try:
                    out = orig(*args, **kwargs)
                finally:
                    rec._clip_depth -= 1
                if rec._clip_depth == 0:
                    norm = None
                    if isinstance(out, torch.Tensor) and out.numel() == 1:
                        with contextlib.suppress(Exception):
                            norm = float(out.detach().double())
                    rec.trace.clips.append({"fn": name, "norm": norm, "at": len(rec.trace.steps),
                                            "scale": rec._current_scale})
                return out

            fn.__wrapped__ = orig
            return fn

        for name in ("clip_grad_norm_", "clip_grad_value_", "get_total_norm", "clip_grad_norm"):
            orig = getattr(cg, name, None)
            if orig is None:
                continue
            w = wrap(name, orig)
            self._patch(cg, name, w)
            if getattr(torch.nn.utils, name, None) is orig:
                self._patch(torch.nn.utils, name, w)


    def _install_schedulers(self) -> None:
        import torch.optim.lr_scheduler as ls

        rec = self
        for cls in [o for o in vars(ls).values() if isinstance(o, type) and "step" in vars(o)]:
            if cls.__name__ == "Optimizer":
                continue
            orig = cls.step

            def step(self, *args, _orig=orig, **kwargs):
                rec._sched_depth += 1
                try:
                    return _orig(self, *args, **kwargs)
                finally:
                    rec._sched_depth -= 1
                    if rec._sched_depth == 0:
                        last = rec.trace.steps[-1] if rec.trace.steps else None
                        prev = rec.trace.sched[-1]["at"] if rec.trace.sched else -1
                        rec.trace.sched.append({"at": len(rec.trace.steps),
                                                "after_skip": bool(last is not None and last.skipped
                                                                   and len(rec.trace.steps) > prev)})

            self._patch(cls, "step", step)

    def _install_autocast(self) -> None:
        torch = self.torch
        rec = self
        AC = torch.amp.autocast_mode.autocast
        orig_init, orig_enter, orig_exit = AC.__init__, AC.__enter__, AC.__exit__
        policy = self._make_cuda_policy() if self.emulate else None

        def __init__(self, *args, **kwargs):
            orig_init(self, *args, **kwargs)
            if rec.mode == FP32:
                self._enabled = False

        def __enter__(self):
            out = orig_enter(self)
            try:
                key = (str(self.device), str(self.fast_dtype).replace("torch.", ""), bool(self._enabled))
            except Exception:  # noqa: BLE001
                key = ("?", "?", False)
            rec._regions[key] = rec._regions.get(key, 0) + 1
            if policy is not None and key[0] == "cpu" and key[2] and key[1] == "float16":
                mode = policy()
                mode.__enter__()
                self._amplint_policy = mode
            return out

        def __exit__(self, *exc):
            mode = self.__dict__.pop("_amplint_policy", None)
            if mode is not None:
                mode.__exit__(*exc)
            return orig_exit(self, *exc)

        self._patch(AC, "__init__", __init__)
        self._patch(AC, "__enter__", __enter__)
        self._patch(AC, "__exit__", __exit__)

    def _make_cuda_policy(self):
        """A dispatch mode that hands each op to CUDA autocast's kernel for it first (once per op).

        For CPU tensors that kernel casts nothing (it only casts CUDA tensors) and runs the op;
        a banned op's kernel raises the error a CUDA run raises. Ops that mutate their inputs are
        never probed (the probe runs the op)."""
        torch = self.torch
        from torch.utils._python_dispatch import TorchDispatchMode

        key = getattr(torch._C.DispatchKey, "AutocastCUDA", None)
        if key is None:
            return None
        rec = self
        verdicts: dict[Any, Any] = {}

        class CudaAutocastPolicy(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                kwargs = kwargs or {}
                v = verdicts.get(func)
                if v is None:
                    v = "pass"
                    try:
                        probe = (not func._schema.is_mutable) and func.has_kernel_for_dispatch_key(key)
                    except Exception:  # noqa: BLE001
                        probe = False
                    if probe:
                        try:
                            func._op_dk(key, *args, **kwargs)
                        except RuntimeError as e:
                            if "autocast" in str(e):
                                v = str(e)
                    verdicts[func] = v
                if v != "pass":
                    rec._banned.append(str(func))
                    raise RuntimeError(v)
                return func(*args, **kwargs)

        self.trace.emulation = "cuda-autocast"
        return CudaAutocastPolicy

    def _make_op_recorder(self):
        torch = self.torch
        from torch.utils._python_dispatch import TorchDispatchMode

        rec = self
        task_id = getattr(torch._C, "_current_graph_task_id", None)

        class OpRecorder(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                out = func(*args, **(kwargs or {}))
                phase = "backward" if task_id is not None and task_id() != -1 else "forward"
                t = out[0] if isinstance(out, (tuple, list)) and out else out
                dtype = str(t.dtype).replace("torch.", "") if isinstance(t, torch.Tensor) else "-"
                name = f"{func._overloadpacket.__name__}:{dtype}"
                d = rec._ops[phase]
                d[name] = d.get(name, 0) + 1
                return out

        return OpRecorder()

    def _install_warning_guard(self) -> None:
        """The loop's own file cannot switch warnings off for the harness (it is told it did)."""
        rec = self

        def guard(name, orig):
            def fn(*args, **kwargs):
                if rec._from_loop():
                    rec.trace.silenced.append(f"warnings.{name}{args!r}"[:200])
                    return None
                return orig(*args, **kwargs)

            return fn

        for name in ("filterwarnings", "simplefilter", "resetwarnings"):
            self._patch(warnings, name, guard(name, getattr(warnings, name)))


# --- loading ---------------------------------------------------------------------------------


def load_module(path: Path, name: str, source: str | None = None):
    """Execute the loop's file (or ``source`` under its name) as module ``name``."""
    text = source if source is not None else path.read_text(encoding="utf-8")
    spec = importlib.util.spec_from_loader(name, loader=None, origin=str(path))
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    module.__file__ = str(path)
    sys.modules[name] = module
    code = compile(text, str(path), "exec")
    exec(code, module.__dict__)  # noqa: S102 - running the loop is what verify is for
    return module


def load_object(ref: str, extra_sys_path: list[str] | None = None):
    from .bench import load_object as _load

    return _load(ref, extra_sys_path)


def _exception_record(exc: BaseException, fixture: Path, steps_done: int, where: str = "train") -> dict[str, Any]:
    frames = traceback.extract_tb(exc.__traceback__)
    fixture_line = None
    target = os.path.realpath(fixture)
    for fr in frames:
        if os.path.realpath(fr.filename) == target:
            fixture_line = fr.lineno
    last = frames[-1] if frames else None
    return {
        "type": type(exc).__name__,
        "message": str(exc),
        "fixture_line": fixture_line,
        "raised_at": f"{Path(last.filename).name}:{last.lineno}" if last else None,
        "step_index": steps_done,
        "where": where,
    }


def _unpack_problem(obj: Any) -> tuple[Any, Any, Any, dict[str, Any]]:
    if isinstance(obj, dict):
        missing = [k for k in ("model", "optimizer", "batches") if k not in obj]
        if missing:
            raise TypeError(f"make_problem returned a dict without {', '.join(missing)}")
        return obj["model"], obj["optimizer"], obj["batches"], dict(obj.get("train_kwargs") or {})
    if isinstance(obj, (tuple, list)) and len(obj) in (3, 4):
        kw = dict(obj[3]) if len(obj) == 4 else {}
        return obj[0], obj[1], obj[2], kw
    raise TypeError("make_problem must return {'model': ..., 'optimizer': ..., 'batches': ...} "
                    "or (model, optimizer, batches)")


def run_loop(path: str, *, device: str, mode: str = AMP, source: str | None = None, entry: str = "train",
             optimizer: str = "sgd", lr: float | None = None, n_batches: int = 40, batch_size: int = 32,
             seed: int = 0, train_kwargs: dict[str, Any] | None = None, problem: str | None = None,
             steps: int | None = None, emulate_cuda_autocast: bool = False, record_ops: bool = False,
             rank: int = 0, sys_path: list[str] | None = None) -> dict[str, Any]:
    """Build the problem, run ``entry`` from ``path`` (or ``source``), return the trace as a dict.

    ``problem``: None for the harness's standard problem (``optimizer``, ``lr``, ``n_batches``,
    ``batch_size``), ``"module"`` for a ``make_problem(device, seed)`` defined by the loop's own
    file, or ``MODULE:FUNCTION`` / ``path.py:FUNCTION``. ``steps`` bounds the batches handed over.
    """
    import torch

    from . import problem as P

    loop = Path(path)
    for p in reversed(sys_path or []):
        if p not in sys.path:
            sys.path.insert(0, p)
    P.set_deterministic(device)
    t0 = time.perf_counter()
    rec = Recorder(torch, mode=mode, emulate_cuda_autocast=emulate_cuda_autocast, record_ops=record_ops,
                   loop_file=str(loop))
    trace = rec.trace
    kwargs = dict(train_kwargs or {})
    model = opt = batches = None
    if problem is None:
        try:
            model = P.make_model(seed=seed, device=device)
            opt = P.make_optimizer(optimizer, model.parameters(), lr)
            batches = P.make_batches(device, n_batches=n_batches, batch_size=batch_size, seed=seed + 1 + rank)
        except Exception:  # noqa: BLE001 - the harness's own failure, reported as such
            return Trace(status=ERROR, mode=mode, detail=traceback.format_exc(limit=4)).to_dict()
    out = io.StringIO()
    caught: list = []
    rec.install()
    try:
        with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(out):
            warnings.simplefilter("always")
            name = f"_amplint_loop_{loop.parent.name}_{loop.stem}_{os.getpid()}"
            try:
                module = load_module(loop, name, source)
            except Exception as exc:  # noqa: BLE001 - the loop's file failing at import is data
                trace.status = RAISED
                trace.exception = _exception_record(exc, loop, 0, where="import")
                module = None
            if module is not None and problem is not None:
                try:
                    torch.manual_seed(seed)
                    hook = getattr(module, "make_problem", None) if problem == "module" else \
                        load_object(problem, [str(loop.parent), os.getcwd()])
                    if hook is None:
                        raise AttributeError(f"{loop.name} defines no make_problem(device, seed)")
                    model, opt, batches, extra = _unpack_problem(hook(device, seed))
                    kwargs = {**extra, **kwargs}
                    batches = list(itertools.islice(iter(batches), steps)) if steps else list(batches)
                except Exception:  # noqa: BLE001 - a broken problem is not the loop's failure
                    trace.status = ERROR
                    trace.detail = "the problem could not be built:\n" + traceback.format_exc(limit=4)
                    module = None
            if module is not None:
                fn = getattr(module, entry, None)
                try:
                    if fn is None:
                        raise AttributeError(f"{loop.name} defines no {entry}()")
                    history = fn(model, opt, batches, device, **kwargs)
                    trace.status = OK
                    trace.history = _plain_history(history)
                except Exception as exc:  # noqa: BLE001 - the loop's own exception is data
                    trace.status = RAISED
                    trace.exception = _exception_record(exc, loop, len(trace.steps))
    finally:
        rec.remove()
    counts: dict[tuple, int] = {}
    for w in caught:
        key = (w.category.__name__, str(w.message), Path(w.filename).name, w.lineno)
        counts[key] = counts.get(key, 0) + 1
    trace.warnings = [{"category": c, "message": m, "filename": f, "lineno": n, "count": k}
                      for (c, m, f, n), k in list(counts.items())[:MAX_WARNINGS]]
    if trace.status != ERROR:
        trace.detail = out.getvalue()[-2000:]
    trace.wall_s = time.perf_counter() - t0
    return trace.to_dict()


# --- several processes -------------------------------------------------------------------------


def _rank_main(store: str, rank: int, world_size: int, kwargs: dict[str, Any]) -> dict[str, Any]:
    import datetime

    import torch.distributed as dist

    dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=world_size,
                            timeout=datetime.timedelta(seconds=120))
    try:
        return run_loop(**kwargs, rank=rank)
    finally:
        with contextlib.suppress(Exception):
            dist.destroy_process_group()


def run_ranks(path: str, *, world_size: int = 2, timeout: float = 120.0, **kwargs: Any) -> dict[str, Any]:
    """Run the loop on ``world_size`` gloo ranks (forked processes on CPU); rank 0's trace, with
    every rank's under ``ranks``. Each rank gets its own batches (seeded by rank)."""
    import torch.distributed as dist

    from . import isolate

    if not dist.is_available():
        t = Trace(status=ERROR, mode=kwargs.get("mode", AMP), detail="torch.distributed is not available")
        return t.to_dict()
    kwargs = {**kwargs, "device": "cpu"}
    with tempfile.TemporaryDirectory(prefix="amplint-ranks-") as tmp:
        store = os.path.join(tmp, "store")
        jobs = [isolate.Job(r, _rank_main, (store, r, world_size, {"path": path, **kwargs}), timeout=timeout)
                for r in range(world_size)]
        outs = isolate.run_jobs(jobs, parallel=world_size)
    traces = []
    for r in range(world_size):
        o = outs[r]
        if o.status != "ok":
            detail = f"rank {r}: {o.status}\n{o.detail.strip()[-1500:]}"
            return Trace(status=ERROR if o.status == "error" else o.status, mode=kwargs.get("mode", AMP),
                         detail=detail).to_dict()
        traces.append(o.value)
    head = dict(traces[0])
    head["ranks"] = traces
    return head


def _plain_history(history: Any) -> dict[str, Any]:
    """The loop's returned dict with tensors and numbers turned into floats."""
    if not isinstance(history, dict):
        return {"returned": repr(history)[:200]}
    out: dict[str, Any] = {}
    for key, values in history.items():
        if isinstance(values, (list, tuple)):
            out[str(key)] = [_num(v) for v in values]
        else:
            out[str(key)] = _num(values)
    return out


def _num(v: Any) -> Any:
    try:
        return float(v)
    except (TypeError, ValueError, RuntimeError):
        return repr(v)[:100]
