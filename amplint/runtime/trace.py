"""What one training run left behind, as plain data (no torch needed to read it).

A :class:`Trace` is built in the child process that ran the loop (see ``instrument.py``), sent
to the parent as a dict, and read by the rule's signs (``signs.py``).

Observables recorded from outside the loop:

- ``steps``: one :class:`Step` per ``scaler.step(opt)`` call and per ``optimizer.step()`` that
  ran outside a scaler step (``via`` says which): whether the scaler's own inf check found an
  inf/NaN (``found_inf``: the scaler skipped the step), whether any parameter changed, the global
  L2 norm of the parameter change, the gradients the optimizer consumed (norm, fraction of
  exact zeros, per-tensor norms for the first steps, non-finite entries), the learning rate,
  the scale in effect, how many scheduler steps had run, and the time.
- ``scales``: ``scaler.get_scale()`` after each ``update()`` (``updates``: the step count then).
- ``scaled``: ``(value, scale)`` of every scalar passed to ``scaler.scale()``.
- ``scalers``: every GradScaler built (enabled, init scale, growth factor, device, step count).
- ``clips``: the total norm every gradient-clipping call computed (and the scale in effect).
- ``sched``: every ``lr_scheduler.step()``, and whether the optimizer step before it was skipped.
- ``autocast``: the autocast regions entered (device, dtype, enabled) and how often.
- ``ops``: with op recording on, aten ops by phase (forward/backward), name and dtype.
- ``history``: the dict the loop's ``train`` returned.
- ``exception``: the loop's own exception (type, message, line in the loop's file, how many
  steps had completed), or None.
- ``warnings``: every warning raised during the run (the loop cannot silence them for the
  harness: ``silenced`` lists its attempts to).
- ``ranks``: for a multi-process run, one trace per rank (the trace itself is rank 0's).
- ``status``: ``ok`` (returned), ``raised`` (the loop raised: data, not a harness problem),
  ``error`` (the harness could not set the run up), ``crashed`` (the child died) or ``timeout``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

OK, RAISED, ERROR, CRASHED, TIMEOUT = "ok", "raised", "error", "crashed", "timeout"
AMP, FP32 = "amp", "fp32"  # run modes: as written, or the FP32 reference (autocast and scalers off)


@dataclass
class Step:
    via: str  # "scaler" or "optimizer"
    unchanged: bool  # no parameter of the optimizer changed
    update_norm: float
    grad_norm: float | None = None
    zero_grad_fraction: float | None = None
    nonfinite_params: bool = False
    scale: float | None = None  # the scale in effect (enabled scaler steps only)
    found_inf: bool | None = None  # the scaler's own inf check; None without an enabled scaler step
    lr: float | None = None
    sched: int = 0  # lr_scheduler.step() calls before this optimizer step
    t: float = 0.0  # seconds since the loop started
    opt: int = 0  # which optimizer, in order of first use
    grad_norms: list[float] | None = None  # per parameter tensor (the first steps only)
    nonfinite_grads: bool = False

    @property
    def skipped(self) -> bool:
        """The optimizer did not apply this step: the scaler found an inf (or nothing changed)."""
        return self.found_inf if self.found_inf is not None else self.unchanged


@dataclass
class Trace:
    status: str = OK
    mode: str = AMP
    history: dict[str, Any] = field(default_factory=dict)
    steps: list[Step] = field(default_factory=list)
    scales: list[float] = field(default_factory=list)
    updates: list[int] = field(default_factory=list)
    scaled: list[tuple[float, float]] = field(default_factory=list)
    scalers: list[dict[str, Any]] = field(default_factory=list)
    clips: list[dict[str, Any]] = field(default_factory=list)
    sched: list[dict[str, Any]] = field(default_factory=list)
    autocast: list[dict[str, Any]] = field(default_factory=list)
    ops: dict[str, Any] = field(default_factory=dict)
    exception: dict[str, Any] | None = None
    warnings: list[dict[str, Any]] = field(default_factory=list)
    silenced: list[str] = field(default_factory=list)
    emulation: str = ""  # e.g. "cuda-autocast": CUDA autocast's op policy was applied on CPU
    ranks: list[Trace] = field(default_factory=list)
    detail: str = ""  # harness-level problem (error/crash/timeout), or the captured output tail
    wall_s: float = 0.0

    # --- (de)serialisation -------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Trace:
        data = dict(data)
        data["steps"] = [Step(**s) for s in data.get("steps", [])]
        data["scaled"] = [tuple(x) for x in data.get("scaled", [])]
        data["ranks"] = [cls.from_dict(r) for r in data.get("ranks", [])]
        return cls(**data)

    # --- derived observables -----------------------------------------------------------

    @property
    def completed(self) -> bool:
        """The loop ran to its end or raised its own exception (both are data)."""
        return self.status in (OK, RAISED)

    @property
    def raised(self) -> bool:
        return self.status == RAISED

    def raised_like(self, exc_type: str, text: str = "") -> bool:
        e = self.exception
        return bool(e) and e["type"] == exc_type and text in e["message"]

    def series(self, key: str) -> list[float]:
        values = self.history.get(key) if isinstance(self.history, dict) else None
        if not isinstance(values, (list, tuple)):
            return []
        out = []
        for v in values:
            try:
                out.append(float(v))
            except (TypeError, ValueError):
                continue
        return out

    def series_keys(self) -> list[str]:
        if not isinstance(self.history, dict):
            return []
        return [k for k, v in self.history.items() if isinstance(v, (list, tuple)) and self.series(k)]

    @property
    def loss(self) -> list[float]:
        """The per-step training loss: the loop's ``loss`` series, else what it scaled."""
        return self.series("loss") or [v for v, _s in self.scaled]

    @property
    def first_loss(self) -> float:
        loss = self.loss
        return loss[0] if loss else math.nan

    @property
    def final_loss(self) -> float:
        loss = self.loss
        return loss[-1] if loss else math.nan

    def tail(self, key: str = "loss") -> float:
        """Mean of the last tenth of a series (at least one value): the end of training, less noisy."""
        s = self.loss if key == "loss" else self.series(key)
        if not s:
            return math.nan
        k = max(1, math.ceil(len(s) / 10))
        return sum(s[-k:]) / k

    def nonfinite(self, key: str = "loss") -> bool:
        s = self.loss if key == "loss" else self.series(key)
        return any(not math.isfinite(v) for v in s) or (key == "loss" and self.first_nonfinite_step is not None)

    @property
    def n_steps(self) -> int:
        return len(self.steps)

    @property
    def n_skipped(self) -> int:
        return sum(1 for s in self.steps if s.skipped)

    @property
    def n_found_inf(self) -> int:
        return sum(1 for s in self.steps if s.found_inf)

    @property
    def executed(self) -> list[Step]:
        return [s for s in self.steps if not s.skipped]

    @property
    def mean_update(self) -> float:
        """Mean ‖Δθ‖ over the steps that changed the parameters (NaN when none did)."""
        ups = [s.update_norm for s in self.executed if math.isfinite(s.update_norm)]
        return sum(ups) / len(ups) if ups else math.nan

    @property
    def final_scale(self) -> float | None:
        return self.scales[-1] if self.scales else None

    @property
    def scale_in_effect(self) -> list[float]:
        return [s.scale for s in self.steps if s.scale is not None]

    def scale_candidates(self) -> list[float]:
        """Every loss scale the run used (steps, updates, scaled scalars, clip calls)."""
        vals = set(self.scale_in_effect) | set(self.scales) | {s for _v, s in self.scaled}
        vals |= {c["scale"] for c in self.clips if c.get("scale")}
        return sorted(v for v in vals if v and math.isfinite(v) and v > 1.0)

    @property
    def first_nonfinite_step(self) -> int | None:
        for i, s in enumerate(self.steps):
            if s.nonfinite_params:
                return i
        return None

    def mean_zero_grad_fraction(self) -> float:
        fr = [s.zero_grad_fraction for s in self.steps if s.zero_grad_fraction is not None]
        return sum(fr) / len(fr) if fr else math.nan

    def warnings_like(self, category: str | None = None, text: str = "") -> list[dict[str, Any]]:
        return [w for w in self.warnings
                if (category is None or w["category"] == category) and text in w["message"]]

    def enabled_scalers(self) -> int:
        return sum(1 for s in self.scalers if s.get("enabled"))

    def step_seconds(self) -> float:
        """Median seconds between consecutive optimizer steps of optimizer 0 (NaN with < 3 steps)."""
        ts = [s.t for s in self.steps if s.opt == 0]
        gaps = sorted(b - a for a, b in zip(ts, ts[1:]))
        return gaps[len(gaps) // 2] if len(gaps) >= 2 else math.nan

    def summary(self) -> str:
        """A short human description: how the run ended and what the loss did."""
        if self.status == TIMEOUT:
            return "timed out"
        if self.status == CRASHED:
            return f"crashed ({self.detail.strip().splitlines()[-1] if self.detail.strip() else 'no output'})"
        if self.status == ERROR:
            return f"harness error ({self.detail.strip().splitlines()[-1] if self.detail.strip() else '?'})"
        if self.raised:
            e = self.exception or {}
            return f"{e.get('type')} at step {e.get('step_index')}"
        loss = self.loss
        if loss:
            return f"{len(loss)} steps, loss {fmt(loss[0])} -> {fmt(loss[-1])}"
        return "completed"


def progress(first: float, end: float) -> float:
    """How far training went: ln(first / end) for positive losses, else the relative drop.

    0 means no progress; ln 2 means the loss halved. Non-finite ends are -inf (diverged).
    """
    if not math.isfinite(end):
        return -math.inf
    if not math.isfinite(first):
        return math.nan
    if first > 0 and end > 0:
        return math.log(first / end)
    return (first - end) / abs(first) if first else math.nan


def fmt(x: Any, digits: int = 4) -> str:
    """Format a number compactly (4 significant digits); pass strings through."""
    if x is None:
        return "-"
    if isinstance(x, bool):
        return str(x)
    if isinstance(x, int):
        return str(x)
    if isinstance(x, float):
        if math.isnan(x):
            return "nan"
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
        if x.is_integer() and abs(x) < 1e9:
            return str(int(x))
        return f"{x:.{digits}g}"
    return str(x)


def jsonable(obj: Any) -> Any:
    """Replace non-finite floats by strings so the output is strict JSON."""
    if isinstance(obj, float):
        if math.isfinite(obj):
            return obj
        return "nan" if math.isnan(obj) else ("inf" if obj > 0 else "-inf")
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    return obj
