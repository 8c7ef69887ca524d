"""Run one fixture's ``train`` on the standard problem and record it from the outside.

Runs in a forked child (see ``isolate.py``), so patching ``torch.amp.GradScaler`` and installing
global optimizer hooks here affects that run only. The fixture needs nothing but ``train(...)``.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import math
import os
import sys
import time
import traceback
import warnings
from pathlib import Path
from typing import Any

from .trace import ERROR, OK, RAISED, Step, Trace

MAX_WARNINGS = 200


class Recorder:
    """Patches GradScaler and hooks every optimizer's ``step`` while installed."""

    def __init__(self, torch) -> None:
        self.torch = torch
        self.trace = Trace()
        self._in_scaler_step: dict[str, Any] | None = None
        self._plain: dict[int, tuple[list, list]] = {}
        self._undo: list = []

    # --- helpers ------------------------------------------------------------------------

    @staticmethod
    def _params(optimizer) -> list:
        return [p for g in optimizer.param_groups for p in g["params"]]

    def _grad_stats(self, params) -> tuple[float | None, float | None]:
        torch = self.torch
        sq, zeros, total = 0.0, 0, 0
        seen = False
        with torch.no_grad():
            for p in params:
                g = p.grad
                if g is None:
                    continue
                seen = True
                g = g.detach()
                sq += float(g.double().pow(2).sum())
                zeros += int((g == 0).sum())
                total += g.numel()
        if not seen:
            return None, None
        return math.sqrt(sq), (zeros / total if total else None)

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

    # --- install / remove ---------------------------------------------------------------

    def install(self) -> None:
        torch = self.torch
        GS = torch.amp.GradScaler
        rec = self
        orig = {name: getattr(GS, name) for name in ("__init__", "step", "update", "scale")}

        def __init__(self, *args, **kwargs):
            orig["__init__"](self, *args, **kwargs)
            try:
                rec.trace.scalers.append(bool(self.is_enabled()))
            except Exception:  # noqa: BLE001 - recording must never break the fixture
                rec.trace.scalers.append(False)

        def step(self, optimizer, *args, **kwargs):
            params = rec._params(optimizer)
            before = rec._snapshot(params)
            try:
                scale = float(self.get_scale()) if self.is_enabled() else None
            except Exception:  # noqa: BLE001
                scale = None
            outer = rec._in_scaler_step
            rec._in_scaler_step = {"grad_norm": None, "zero": None}
            try:
                out = orig["step"](self, optimizer, *args, **kwargs)
            finally:
                info, rec._in_scaler_step = rec._in_scaler_step, outer
            skipped, norm, nonfinite = rec._delta(params, before)
            rec.trace.steps.append(Step("scaler", skipped, norm, info["grad_norm"], info["zero"], nonfinite, scale))
            return out

        def update(self, *args, **kwargs):
            out = orig["update"](self, *args, **kwargs)
            try:
                rec.trace.scales.append(float(self.get_scale()))
            except Exception:  # noqa: BLE001
                pass
            return out

        def scale(self, outputs):
            out = orig["scale"](self, outputs)
            try:
                if isinstance(outputs, torch.Tensor) and outputs.numel() == 1:
                    rec.trace.scaled.append((float(outputs.detach().float()), float(self.get_scale())))
            except Exception:  # noqa: BLE001
                pass
            return out

        for name, fn in (("__init__", __init__), ("step", step), ("update", update), ("scale", scale)):
            setattr(GS, name, fn)
            self._undo.append((GS, name, orig[name]))

        from torch.optim.optimizer import (
            register_optimizer_step_post_hook,
            register_optimizer_step_pre_hook,
        )

        def pre(optimizer, args, kwargs):
            params = rec._params(optimizer)
            gn, zero = rec._grad_stats(params)
            if rec._in_scaler_step is not None:
                rec._in_scaler_step.update(grad_norm=gn, zero=zero)
            else:
                rec._plain[id(optimizer)] = (rec._snapshot(params), [gn, zero])

        def post(optimizer, args, kwargs):
            if rec._in_scaler_step is not None:
                return
            snap = rec._plain.pop(id(optimizer), None)
            if snap is None:
                return
            params = rec._params(optimizer)
            skipped, norm, nonfinite = rec._delta(params, snap[0])
            rec.trace.steps.append(Step("optimizer", skipped, norm, snap[1][0], snap[1][1], nonfinite, None))

        self._handles = [register_optimizer_step_pre_hook(pre), register_optimizer_step_post_hook(post)]

    def remove(self) -> None:
        for owner, name, fn in reversed(self._undo):
            setattr(owner, name, fn)
        self._undo.clear()
        for h in getattr(self, "_handles", []):
            h.remove()


def load_fixture(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _exception_record(exc: BaseException, fixture: Path, steps_done: int) -> dict[str, Any]:
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
    }


def run_fixture(path: str, *, device: str, optimizer: str = "sgd", lr: float | None = None, n_batches: int = 40,
                batch_size: int = 32, seed: int = 0, train_kwargs: dict[str, Any] | None = None) -> dict[str, Any]:
    """Build the seeded problem, run ``train`` from ``path`` and return the trace as a dict."""
    import torch

    from . import problem

    fixture = Path(path)
    problem.set_deterministic(device)
    t0 = time.perf_counter()
    try:
        model = problem.make_model(seed=seed, device=device)
        opt = problem.make_optimizer(optimizer, model.parameters(), lr)
        batches = problem.make_batches(device, n_batches=n_batches, batch_size=batch_size, seed=seed + 1)
    except Exception:  # noqa: BLE001 - the harness's own failure, reported as such
        return Trace(status=ERROR, detail=traceback.format_exc(limit=4)).to_dict()

    rec = Recorder(torch)
    out = io.StringIO()
    trace = rec.trace
    rec.install()
    try:
        with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(out):
            warnings.simplefilter("always")
            try:
                module = load_fixture(fixture, f"_amplint_fixture_{fixture.parent.name}_{fixture.stem}")
                history = module.train(model, opt, batches, device, **(train_kwargs or {}))
                trace.status = OK
                trace.history = _plain_history(history)
            except Exception as exc:  # noqa: BLE001 - the fixture's own exception is data
                trace.status = RAISED
                trace.exception = _exception_record(exc, fixture, len(trace.steps))
    finally:
        rec.remove()
    counts: dict[tuple, int] = {}
    for w in caught:
        key = (w.category.__name__, str(w.message), Path(w.filename).name, w.lineno)
        counts[key] = counts.get(key, 0) + 1
    trace.warnings = [{"category": c, "message": m, "filename": f, "lineno": n, "count": k}
                      for (c, m, f, n), k in list(counts.items())[:MAX_WARNINGS]]
    trace.detail = out.getvalue()[-2000:]
    trace.wall_s = time.perf_counter() - t0
    return trace.to_dict()


def _plain_history(history: Any) -> dict[str, Any]:
    """The fixture's returned dict with tensors and numbers turned into floats."""
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
