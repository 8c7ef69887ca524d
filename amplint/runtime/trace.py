"""What one fixture run left behind, as plain data (no torch needed to read it).

A :class:`Trace` is built in the child process that ran the fixture (see ``instrument.py``),
sent to the parent as a dict, and read by the rule's runtime spec.

Observables recorded from outside the fixture:

- ``steps``: one :class:`Step` per ``scaler.step(opt)`` call and per ``optimizer.step()`` that
  ran outside a scaler step (``via`` says which). ``skipped`` is True when no parameter of the
  optimizer changed; ``update_norm`` is the global L2 norm of the parameter change; ``grad_norm``
  and ``zero_grad_fraction`` describe the gradients the optimizer consumed (None when the scaler
  skipped the step and the optimizer never ran).
- ``scales``: ``scaler.get_scale()`` after each ``update()``.
- ``scaled``: ``(value, scale)`` of every scalar passed to ``scaler.scale()``.
- ``scalers``: how many GradScalers were built and whether each was enabled.
- ``history``: the dict the fixture's ``train`` returned.
- ``exception``: the fixture's own exception (type, message, the fixture line, how many steps had
  completed), or None.
- ``warnings``: every warning raised during the run (category, message, location).
- ``status``: ``ok`` (returned), ``raised`` (the fixture raised: data, not a harness problem),
  ``error`` (the harness could not set the run up), ``crashed`` (the child died) or ``timeout``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

OK, RAISED, ERROR, CRASHED, TIMEOUT = "ok", "raised", "error", "crashed", "timeout"


@dataclass
class Step:
    via: str  # "scaler" or "optimizer"
    skipped: bool
    update_norm: float
    grad_norm: float | None = None
    zero_grad_fraction: float | None = None
    nonfinite_params: bool = False
    scale: float | None = None  # the scale in effect (scaler steps only)


@dataclass
class Trace:
    status: str = OK
    history: dict[str, Any] = field(default_factory=dict)
    steps: list[Step] = field(default_factory=list)
    scales: list[float] = field(default_factory=list)
    scaled: list[tuple[float, float]] = field(default_factory=list)
    scalers: list[bool] = field(default_factory=list)
    exception: dict[str, Any] | None = None
    warnings: list[dict[str, Any]] = field(default_factory=list)
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
        return cls(**data)

    # --- derived observables -----------------------------------------------------------

    @property
    def completed(self) -> bool:
        """The fixture ran to its end or raised its own exception (both are data)."""
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

    @property
    def loss(self) -> list[float]:
        """The per-step training loss: the fixture's ``loss`` series, else what it scaled."""
        return self.series("loss") or [v for v, _s in self.scaled]

    @property
    def first_loss(self) -> float:
        loss = self.loss
        return loss[0] if loss else math.nan

    @property
    def final_loss(self) -> float:
        loss = self.loss
        return loss[-1] if loss else math.nan

    @property
    def n_steps(self) -> int:
        return len(self.steps)

    @property
    def n_skipped(self) -> int:
        return sum(1 for s in self.steps if s.skipped)

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

    def trained(self, factor: float = 0.5) -> bool:
        """Completed without an exception and the final loss fell below ``factor`` x the first."""
        first, last = self.first_loss, self.final_loss
        return self.status == OK and math.isfinite(last) and math.isfinite(first) and last < factor * first

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
