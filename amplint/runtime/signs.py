"""Signs of a failure mode: direction-aware predicates over a run and its twin.

A rule's runtime spec lists the signs of every documented variant of its failure mode (loud and
silent): an exception, a loss that diverges or stops improving, an observable that is the twin's
times the loss scale to some power, steps the scaler's own inf check skipped, underflowed
gradients, a schedule that runs ahead, ... Each sign compares the run under test (``bad``) with
its twin (``twin``: the fixed loop on the same problem), never with an absolute threshold tuned to
one model: ratios are relative to the twin, and loss comparisons are scaled by the twin's own
distance from the FP32 reference run.

Each sign is either ``harm`` (the damage itself was measured: a crash, a worse or non-finite
loss, a reported number off by the scale, lost optimizer steps) or ``mechanism`` (the cause was
measured: the clip saw scaled gradients, the scale never adapted, gradients flushed to zero,
...). ``vs_reference``: the sign is also checked between the twin and the FP32 reference, so a
twin that shows the failure itself is caught; signs of AMP-only dynamics (skipped steps while the
scale calibrates, scale trajectories) are not.

Nothing here imports torch: signs read plain :class:`~amplint.runtime.trace.Trace` data.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Any

from .trace import Trace, fmt, progress

HARM, MECHANISM = "harm", "mechanism"
EXACT_TOL = 0.02  # a ratio measured on identical parameters (first values) must match S**k this closely
APPROX_TOL = 10.0  # ratios after the runs diverge: within 10x of S**k (amp-semantics.md §6)
MIN_GAP = math.log(2.0)  # a loss at least 2x the twin's ...
PROGRESS_SHARE = 0.5  # ... or at most half the twin's training progress (in log-loss)
MATMUL_OPS = frozenset({"mm", "addmm", "bmm", "baddbmm", "matmul", "linear", "convolution", "_convolution",
                        "convolution_backward", "addmv", "mv", "dot", "_scaled_dot_product_flash_attention",
                        "_scaled_dot_product_efficient_attention", "_scaled_dot_product_attention_math"})


@dataclass
class Context:
    device: str = "cpu"
    ref: Trace | None = None  # the FP32 reference run of the twin
    bad_name: str = "bad.py"
    twin_name: str = "good.py"


@dataclass
class Evidence:
    sign: str
    kind: str
    shown: bool
    observable: str
    bad: str = "-"
    twin: str = "-"
    ratio: float | None = None
    sentence: str = ""
    values: dict[str, Any] = field(default_factory=dict)


def code_span(text: str) -> str:
    """Markdown inline code that survives backticks inside ``text``."""
    text = str(text)
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def first_line(text: str) -> str:
    return (text or "").strip().splitlines()[0] if (text or "").strip() else ""


class Sign:
    name = "sign"
    kind = MECHANISM
    vs_reference = True

    def check(self, bad: Trace, twin: Trace, ctx: Context) -> Evidence:  # pragma: no cover - interface
        raise NotImplementedError

    def _ev(self, shown: bool, observable: str, bad: str = "-", twin: str = "-", ratio: float | None = None,
            sentence: str = "", **values: Any) -> Evidence:
        return Evidence(self.name, self.kind, bool(shown), observable, bad, twin, ratio, sentence, values)


# --- exceptions --------------------------------------------------------------------------------


class Raises(Sign):
    """The run raised one of the documented exceptions (type and a fragment of the message)."""

    name = "raises"
    kind = HARM
    vs_reference = False

    def __init__(self, *variants: tuple[str, str]) -> None:
        self.variants = variants

    def check(self, bad: Trace, twin: Trace, ctx: Context) -> Evidence:
        e = bad.exception or {}
        text = f"{e.get('type')}: {first_line(e.get('message', ''))}" if bad.raised else ""
        hit = bad.raised and any(bad.raised_like(t, m) for t, m in self.variants) and not twin.raised
        where = f" (line {e['fixture_line']})" if e.get("fixture_line") else ""
        at = "while loading" if e.get("where") == "import" else f"after {e.get('step_index')} completed optimizer step(s)"
        if hit:
            sentence = f"{ctx.bad_name} raised {code_span(text)} {at}{where}"
        elif bad.raised:
            sentence = (f"{ctx.bad_name} raised {code_span(text)}, which is not a documented variant "
                        f"({'; '.join(f'{t}: {m}' for t, m in self.variants)})")
        else:
            sentence = f"{ctx.bad_name} raised no exception"
        tl = twin.loss
        twin_text = (f"ok, loss {fmt(tl[0])} -> {fmt(tl[-1])}" if tl else "ok") if twin.status == "ok" else twin.summary()
        return self._ev(hit, f"exception {e.get('type') or self.variants[0][0]}", text or "no exception",
                        twin_text, None, sentence,
                        exc_type=e.get("type"), message=first_line(e.get("message", "")), step_index=e.get("step_index"),
                        exception_md=code_span(text) if text else "")


# --- the loss -----------------------------------------------------------------------------------


def _series(t: Trace, key: str) -> list[float]:
    return t.loss if key == "loss" else t.series(key)


class LossHarm(Sign):
    """The run's ``key`` series went non-finite, or ended clearly worse than the twin's: at least 2x
    the twin's end value or at most half of the twin's progress in log-loss, and by a gap at least
    twice the twin's own distance from the FP32 reference (so AMP's normal noise never counts)."""

    name = "loss"
    kind = HARM
    vs_reference = False

    def __init__(self, key: str = "loss") -> None:
        self.key = key

    def check(self, bad: Trace, twin: Trace, ctx: Context) -> Evidence:
        k = self.key
        b, g = _series(bad, k), _series(twin, k)
        obs = "final loss" if k == "loss" else f"final {k}"
        if not b or not g:
            return self._ev(False, obs, sentence=f"no {k} series to compare")
        if bad.raised:
            return self._ev(False, obs, sentence=f"{ctx.bad_name} raised before the end")
        bt, gt = bad.tail(k), twin.tail(k)
        first_b, first_g = b[0], g[0]
        if bad.nonfinite(k) and not twin.nonfinite(k):
            i = next((j for j, v in enumerate(b) if not math.isfinite(v)), None)
            where = f"at step {i}" if i is not None else f"(parameters non-finite from step {bad.first_nonfinite_step})"
            return self._ev(True, obs, fmt(bt), fmt(gt), math.inf,
                            f"{ctx.bad_name}'s {k} went non-finite {where}; {ctx.twin_name}'s stayed finite "
                            f"({fmt(first_g)} -> {fmt(gt)})", bad_end=bt, twin_end=gt, first=first_b)
        pb, pg = progress(first_b, bt), progress(first_g, gt)
        gap = progress(bt, gt)  # ln(bad_end / twin_end) for positive losses: > 0 when bad is worse
        noise = 0.0
        ref = ctx.ref
        if ref is not None and _series(ref, k):
            n = progress(ref.tail(k), gt)
            noise = abs(n) if math.isfinite(n) else 0.0
        ratio = bt / gt if gt and math.isfinite(gt) and math.isfinite(bt) else math.nan
        worse = math.isfinite(gap) and (gap >= MIN_GAP or (pg > 0 and pb <= PROGRESS_SHARE * pg))
        shown = bool(worse and gap > 0 and gap >= 2 * noise)
        sentence = (f"{k} {fmt(first_b)} -> {fmt(bt)} in {ctx.bad_name} vs -> {fmt(gt)} in {ctx.twin_name} "
                    f"({fmt(ratio)}x; {fmt(_share(pb, pg))} of the twin's log-progress"
                    + (f"; the twin is within {fmt(math.exp(noise))}x of FP32" if ref is not None else "") + ")")
        return self._ev(shown, obs, fmt(bt), fmt(gt), ratio, sentence, bad_end=bt, twin_end=gt, first=first_b,
                        progress_share=_share(pb, pg), noise=math.exp(noise))


def _share(pb: float, pg: float) -> float:
    return pb / pg if pg and math.isfinite(pb) and math.isfinite(pg) else math.nan


# --- ratios that are powers of the loss scale -----------------------------------------------------


def _match_power(r: float, scales: list[float], direction: int, powers: tuple[int, ...], exact: bool):
    """(scale, k) with r ~ scale**(direction*k), or None."""
    if not (r and math.isfinite(r) and r > 0):
        return None
    best = None
    for s in scales:
        for k in powers:
            target = s ** (direction * k)
            if exact:
                err = abs(r / target - 1.0)
                ok = err <= EXACT_TOL
            else:
                err = abs(math.log(r / target))
                ok = err <= math.log(APPROX_TOL)
            if ok and (best is None or (k, err) < (best[1], best[2])):
                best = (s, k, err)  # the lowest power first: power-of-two scales make S**2 = (S')**1
    return best[:2] if best else None


def _first_pair(b: list[float], g: list[float]) -> tuple[float, float] | None:
    """The first pair of finite, non-zero values at the same index (identical parameters until the
    runs first differ: both skipped the same overflowing steps)."""
    for x, y in zip(b, g):
        if math.isfinite(x) and math.isfinite(y) and x and y:
            return x, y
    return None


def _power_text(scale: float, k: int, direction: int) -> str:
    base = fmt(scale)
    p = direction * k
    return f"{base}" if p == 1 else (f"1/{base}" if p == -1 else f"{base}^{p}")


def _is_scale_series(t: Trace, values: list[float]) -> bool:
    known = set(t.scale_candidates()) | {1.0}
    hits = sum(1 for v in values if any(abs(v - s) <= 1e-9 * max(1.0, s) for s in known))
    return bool(values) and hits >= 0.8 * len(values)


class ScaledBy(Sign):
    """An observable of the run is the twin's times the loss scale S to a power k >= 1 (``direction``
    +1: S**k times larger; -1: S**k times smaller).

    ``what``: ``series`` (every series the loop returned: first values, measured on identical
    parameters, so exact), ``clip`` (the first total norm a clipping call computed: exact),
    ``update`` (the parameter change of the first step both applied, and the median over the
    steps both applied: within 10x) or ``grad`` (per-tensor gradient norms the optimizer consumed
    at the first step both applied: within 10x; some tensors may be affected and others not).
    """

    name = "scaled"

    def __init__(self, what: str, direction: int = 1, powers: tuple[int, ...] = (1, 2), kind: str = MECHANISM,
                 keys: tuple[str, ...] = ()) -> None:
        self.what, self.direction, self.powers, self.kind, self.keys = what, direction, powers, kind, keys
        self.name = f"scaled-{what}"

    def check(self, bad: Trace, twin: Trace, ctx: Context) -> Evidence:
        scales = bad.scale_candidates()
        label = {"series": "reported value", "clip": "clip norm", "update": "update ‖Δθ‖",
                 "grad": "gradient norm"}[self.what]
        rel = "x scale" if self.direction > 0 else "x 1/scale"
        obs = f"{label} ratio = {'scale' if self.direction > 0 else '1/scale'}"
        if not scales:
            return self._ev(False, obs, sentence=f"{ctx.bad_name} used no loss scale above 1")
        fn = getattr(self, f"_{self.what}")
        return fn(bad, twin, ctx, scales, obs, rel)

    def _series(self, bad, twin, ctx, scales, obs, rel):
        keys = self.keys or tuple(k for k in bad.series_keys() if k in twin.series_keys())
        best = None
        for key in keys:
            b, g = bad.series(key), twin.series(key)
            if not b or not g or _is_scale_series(bad, b) or _is_scale_series(twin, g):
                continue
            pair = _first_pair(b, g)
            if pair is None:
                continue
            r = pair[0] / pair[1]
            m = _match_power(r, scales, self.direction, self.powers, exact=True)
            n = min(len(b), len(g))
            agree = sum(1 for x, y in zip(b, g) if y and _match_power(x / y, scales, self.direction, self.powers, True))
            cand = (m is not None, agree, key, r, m, pair[0], pair[1], n)
            if best is None or cand[:2] > best[:2]:
                best = cand
        if best is None:
            return self._ev(False, obs, sentence="no reported series in common")
        hit, agree, key, r, m, b0, g0, n = best
        if not hit:
            return self._ev(False, f"{key} ratio", fmt(b0), fmt(g0), r,
                            f"reported {key}: first value {fmt(b0)} vs {fmt(g0)} (ratio {fmt(r)}, not a power of "
                            f"the scales {', '.join(map(fmt, scales[:6]))})", key=key)
        s, k = m
        return self._ev(True, f"{key} ratio = {_power_text(s, k, self.direction)}", fmt(b0), fmt(g0), r,
                        f"the {key} {ctx.bad_name} reported was {fmt(b0)} vs {fmt(g0)} in {ctx.twin_name}: "
                        f"{fmt(r)}x = the loss scale {_power_text(s, k, self.direction)} ({agree} of {n} values match)",
                        key=key, metric_ratio=r, scale=s, power=k * self.direction, matching=agree, n=n,
                        bad_metric=b0, twin_metric=g0)

    def _clip(self, bad, twin, ctx, scales, obs, rel):
        b = [c["norm"] for c in bad.clips if c.get("norm") is not None]
        g = [c["norm"] for c in twin.clips if c.get("norm") is not None]
        pair = _first_pair(b, g)
        if pair is None:
            return self._ev(False, obs, sentence="no finite clipping norm recorded in both runs")
        r = pair[0] / pair[1]
        m = _match_power(r, scales, self.direction, self.powers, exact=True)
        if not m:
            return self._ev(False, obs, fmt(pair[0]), fmt(pair[1]), r, f"first finite clip norm {fmt(pair[0])} vs "
                            f"{fmt(pair[1])} (ratio {fmt(r)})")
        s, k = m
        return self._ev(True, f"clip norm ratio = {_power_text(s, k, self.direction)}", fmt(pair[0]), fmt(pair[1]), r,
                        f"the first gradient clip in {ctx.bad_name} measured a total norm of {fmt(pair[0])} vs "
                        f"{fmt(pair[1])} in {ctx.twin_name}: {fmt(r)}x = the loss scale "
                        f"{_power_text(s, k, self.direction)} (it clipped scaled gradients)",
                        clip_ratio=r, scale=s, bad_clip=pair[0], twin_clip=pair[1])

    def _update(self, bad, twin, ctx, scales, obs, rel):
        n = min(len(bad.steps), len(twin.steps))
        idx = [i for i in range(n) if not bad.steps[i].skipped and not twin.steps[i].skipped
               and bad.steps[i].update_norm > 0 and twin.steps[i].update_norm > 0]
        if idx and bad.steps[idx[0]].scale:  # the scale in effect at the first step both applied
            scales = [bad.steps[idx[0]].scale] + [x for x in scales if x != bad.steps[idx[0]].scale]
        pairs = [(bad.steps[i].update_norm, twin.steps[i].update_norm) for i in range(n)
                 if not bad.steps[i].skipped and not twin.steps[i].skipped
                 and bad.steps[i].update_norm > 0 and twin.steps[i].update_norm > 0
                 and math.isfinite(bad.steps[i].update_norm) and math.isfinite(twin.steps[i].update_norm)]
        if not pairs:
            return self._ev(False, obs, sentence="no step that both runs applied")
        first = pairs[0][0] / pairs[0][1]
        med = statistics.median(b / g for b, g in pairs)
        m1 = _match_power(first, scales, self.direction, self.powers, exact=False)
        m2 = _match_power(med, scales, self.direction, self.powers, exact=False)
        m = m1 or m2
        r = first if m1 else med
        if not m:
            return self._ev(False, obs, fmt(pairs[0][0]), fmt(pairs[0][1]), first,
                            f"update ratio {fmt(first)} at the first step both applied, median {fmt(med)} "
                            f"(not within 10x of a power of the scale)", update_ratio=first, median_ratio=med)
        s, k = m
        return self._ev(True, f"update ratio ~ {_power_text(s, k, self.direction)}", fmt(pairs[0][0]),
                        fmt(pairs[0][1]), r,
                        f"{ctx.bad_name}'s optimizer steps changed the parameters by {fmt(r)}x the twin's "
                        f"({'first step' if m1 else f'median of {len(pairs)} steps'}; the loss scale "
                        f"{_power_text(s, k, self.direction)} = {fmt(s ** (self.direction * k))})",
                        update_ratio=first, median_ratio=med, scale=s, power=k * self.direction)

    def _grad(self, bad, twin, ctx, scales, obs, rel):
        n = min(len(bad.steps), len(twin.steps))
        for i in range(n):
            b, g = bad.steps[i].grad_norms, twin.steps[i].grad_norms
            if not b or not g or len(b) != len(g) or bad.steps[i].opt != twin.steps[i].opt:
                continue
            ratios = [x / y if y and math.isfinite(x) and math.isfinite(y) and x > 0 else math.nan
                      for x, y in zip(b, g)]
            hits = [(j, r, _match_power(r, scales, self.direction, self.powers, exact=False))
                    for j, r in enumerate(ratios)]
            hits = [h for h in hits if h[2]]
            if not hits:
                continue
            s, k = hits[0][2]
            return self._ev(True, f"gradient ratio ~ {_power_text(s, k, self.direction)}", fmt(hits[0][1]), "1",
                            hits[0][1],
                            f"at step {i}, {len(hits)} of {len(b)} parameter tensors received gradients "
                            f"{fmt(hits[0][1])}x the twin's (the loss scale {_power_text(s, k, self.direction)})",
                            tensors=len(hits), of=len(b), grad_ratio=hits[0][1], scale=s, step=i)
        return self._ev(False, obs, sentence="no parameter tensor's gradient was off by a power of the scale")


# --- skipped steps and the scale ------------------------------------------------------------------


def _after_last_scaler(t: Trace) -> list:
    start = t.scalers[-1].get("at", 0) if t.scalers else 0
    return t.steps[start:]


class SkippedMore(Sign):
    """The scaler's own inf check made the run skip clearly more optimizer steps than the twin's
    (at least 2 more, and at least a tenth of the steps): training steps lost."""

    name = "skipped"
    kind = HARM

    def __init__(self, after_last_scaler: bool = False) -> None:
        self.after = after_last_scaler
        self.vs_reference = after_last_scaler  # a calibrating scale skips steps the FP32 run takes

    def check(self, bad: Trace, twin: Trace, ctx: Context) -> Evidence:
        bs = _after_last_scaler(bad) if self.after else bad.steps
        gs = _after_last_scaler(twin) if self.after else twin.steps
        kb, kg = sum(1 for s in bs if s.found_inf), sum(1 for s in gs if s.found_inf)
        extra = kb - kg
        shown = bool(bs) and extra >= max(2, math.ceil(0.1 * len(bs)))
        where = " after the last GradScaler was built" if self.after else ""
        return self._ev(shown, "skipped steps (found_inf)" + (" after resume" if self.after else ""),
                        f"{kb}/{len(bs)}", f"{kg}/{len(gs)}", None,
                        f"the scaler's inf check skipped {kb} of {len(bs)} optimizer steps{where} in {ctx.bad_name} "
                        f"vs {kg} of {len(gs)} in {ctx.twin_name}", bad_skipped=kb, twin_skipped=kg, extra=extra,
                        bad_steps=len(bs), twin_steps=len(gs))


class ScaleFrozen(Sign):
    """The scale in effect never changed in the run (a scaler that is never updated, or built anew
    every step) while the twin's adapted."""

    name = "scale-frozen"
    vs_reference = False

    def check(self, bad: Trace, twin: Trace, ctx: Context) -> Evidence:
        b, g = bad.scale_in_effect, twin.scale_in_effect
        frozen = len(b) >= 3 and len(set(b)) == 1
        adapted = len(set(g)) > 1
        return self._ev(frozen and adapted, "scale in effect", f"{fmt(b[0]) if b else '-'} (fixed)" if frozen else
                        (f"{len(set(b))} values" if b else "-"), f"{fmt(g[0]) if g else '-'} -> {fmt(g[-1]) if g else '-'}",
                        None, f"the scale in effect stayed {fmt(b[0]) if b else '-'} for all {len(b)} steps of "
                        f"{ctx.bad_name} ({len(bad.scalers)} GradScalers built), while {ctx.twin_name}'s went "
                        f"{fmt(g[0]) if g else '-'} -> {fmt(g[-1]) if g else '-'}",
                        bad_scalers=len(bad.scalers), twin_scalers=len(twin.scalers))


def _restarts(t: Trace) -> int:
    s = t.scale_in_effect
    gf = max([x.get("growth_factor") or 2.0 for x in t.scalers if math.isfinite(x.get("growth_factor") or 2.0)]
             or [2.0])
    return sum(1 for a, b in zip(s, s[1:]) if b > a * gf * (1 + 1e-9))


class ScaleRestarts(Sign):
    """The scale in effect jumped back up (by more than the scaler's growth factor) more often than
    in the twin: calibration thrown away, e.g. a resume without the scaler's state."""

    name = "scale-restart"

    def check(self, bad: Trace, twin: Trace, ctx: Context) -> Evidence:
        rb, rg = _restarts(bad), _restarts(twin)
        return self._ev(rb > rg, "scale restarts", str(rb), str(rg), None,
                        f"the scale in effect jumped back up {rb} time(s) in {ctx.bad_name} vs {rg} in "
                        f"{ctx.twin_name} (a fresh scale replaced a calibrated one)", bad_restarts=rb, twin_restarts=rg)


class UpdatesPerStep(Sign):
    """The run called ``scaler.update()`` more often per scaler step than the twin."""

    name = "updates"
    vs_reference = False

    def check(self, bad: Trace, twin: Trace, ctx: Context) -> Evidence:
        nb = sum(1 for s in bad.steps if s.via == "scaler")
        ng = sum(1 for s in twin.steps if s.via == "scaler")
        rb = len(bad.updates) / nb if nb else math.nan
        rg = len(twin.updates) / ng if ng else math.nan
        shown = math.isfinite(rb) and math.isfinite(rg) and rb > rg * 1.5
        return self._ev(shown, "update() per scaler step", fmt(rb), fmt(rg), rb / rg if rg else None,
                        f"{ctx.bad_name} called update() {len(bad.updates)} times for {nb} scaler steps, "
                        f"{ctx.twin_name} {len(twin.updates)} for {ng}", bad_updates=len(bad.updates),
                        twin_updates=len(twin.updates))


class ScaleAhead(Sign):
    """The run's final loss scale is above the twin's: it grew faster."""

    name = "scale-ahead"
    kind = HARM
    vs_reference = False

    def check(self, bad: Trace, twin: Trace, ctx: Context) -> Evidence:
        b, g = bad.final_scale, twin.final_scale
        ratio = b / g if b and g else math.nan
        shown = math.isfinite(ratio) and ratio > 1.0 and bad.enabled_scalers() and twin.enabled_scalers()
        return self._ev(bool(shown), "final loss scale", fmt(b), fmt(g), ratio,
                        f"the loss scale ended at {fmt(b)} after {len(bad.scales)} updates in {ctx.bad_name} vs "
                        f"{fmt(g)} after {len(twin.scales)} in {ctx.twin_name} ({fmt(ratio)}x)",
                        bad_scale=b, twin_scale=g, scale_ratio=ratio)


class ScalerDisabled(Sign):
    """Every GradScaler of the run was disabled (a pass-through) where the twin's was enabled."""

    name = "scaler-disabled"
    vs_reference = False

    def check(self, bad: Trace, twin: Trace, ctx: Context) -> Evidence:
        shown = bool(bad.scalers) and bad.enabled_scalers() == 0 and twin.enabled_scalers() > 0
        dev = ", ".join(sorted({str(s.get("device")) for s in bad.scalers})) or "-"
        return self._ev(shown, "GradScaler enabled", f"{bad.enabled_scalers()}/{len(bad.scalers)}",
                        f"{twin.enabled_scalers()}/{len(twin.scalers)}", None,
                        f"{ctx.bad_name}'s GradScaler (device {dev}) was disabled: scale 1, nothing unscaled or "
                        f"checked", bad_device=dev)


# --- gradients --------------------------------------------------------------------------------------


class ZeroGrads(Sign):
    """The optimizer consumed clearly more exactly-zero gradient entries than the twin's (underflow,
    or gradients wiped before the step): at least 10x the twin's fraction and 5 points more."""

    name = "zero-grads"

    def check(self, bad: Trace, twin: Trace, ctx: Context) -> Evidence:
        bz, gz = bad.mean_zero_grad_fraction(), twin.mean_zero_grad_fraction()
        shown = math.isfinite(bz) and math.isfinite(gz) and bz >= gz + 0.05 and bz >= 10 * gz
        ratio = bz / gz if gz and math.isfinite(gz) else (math.inf if bz and math.isfinite(bz) else math.nan)
        return self._ev(shown, "zero-gradient fraction", fmt(bz), fmt(gz), ratio,
                        f"on average {fmt(bz)} of the gradient entries the optimizer consumed were exactly zero in "
                        f"{ctx.bad_name} vs {fmt(gz)} in {ctx.twin_name}", bad_zero=bz, twin_zero=gz)


class ExtraSteps(Sign):
    """The run applied more parameter-changing optimizer steps than the twin (e.g. a step in eval)."""

    name = "extra-steps"

    def check(self, bad: Trace, twin: Trace, ctx: Context) -> Evidence:
        nb = sum(1 for s in bad.steps if not s.unchanged)
        ng = sum(1 for s in twin.steps if not s.unchanged)
        return self._ev(nb > ng, "parameter-changing steps", str(nb), str(ng), None,
                        f"{ctx.bad_name} changed the parameters in {nb} optimizer steps, {ctx.twin_name} in {ng}",
                        bad_applied=nb, twin_applied=ng)


# --- warnings, autocast ------------------------------------------------------------------------------


class Warns(Sign):
    """The run emitted a warning (category, message fragment) that the twin did not."""

    name = "warns"

    def __init__(self, category: str, text: str = "") -> None:
        self.category, self.text = category, text

    def check(self, bad: Trace, twin: Trace, ctx: Context) -> Evidence:
        bw, gw = bad.warnings_like(self.category, self.text), twin.warnings_like(self.category, self.text)
        nb, ng = sum(w.get("count", 1) for w in bw), sum(w.get("count", 1) for w in gw)
        msgs = list(dict.fromkeys(_short(w["message"]) for w in bw))
        silenced = f"; it tried to silence warnings ({len(bad.silenced)} call(s))" if bad.silenced else ""
        return self._ev(bool(bw) and not gw, self.category, f"{nb} x {self.category}", str(ng), None,
                        f"{ctx.bad_name} emitted {nb} {self.category}(s) ({'; '.join(map(code_span, msgs)) or '-'}), "
                        f"{ctx.twin_name} {ng}{silenced}", bad_count=nb, twin_count=ng,
                        messages_md="; ".join(map(code_span, msgs)))


def _short(text: str, limit: int = 110) -> str:
    text = first_line(text)
    if len(text) <= limit:
        return text
    cut = text.find(". ", 20)
    if 0 < cut < limit:
        return text[: cut + 1]
    return text[: limit - 1] + "…"


class AutocastOff(Sign):
    """Every autocast region the run entered was disabled, while the twin's were enabled."""

    name = "autocast-off"
    vs_reference = False

    def check(self, bad: Trace, twin: Trace, ctx: Context) -> Evidence:
        be = sum(r["count"] for r in bad.autocast if r["enabled"])
        bn = sum(r["count"] for r in bad.autocast)
        ge = sum(r["count"] for r in twin.autocast if r["enabled"])
        return self._ev(bn > 0 and be == 0 and ge > 0, "autocast regions enabled", f"{be}/{bn}",
                        f"{ge}/{sum(r['count'] for r in twin.autocast)}", None,
                        f"{ctx.bad_name} entered {bn} autocast regions, none enabled; {ctx.twin_name}'s were")


# --- schedules ----------------------------------------------------------------------------------------


class SchedulerOnSkipped(Sign):
    """``lr_scheduler.step()`` ran right after optimizer steps the scaler skipped, more than in the twin."""

    name = "sched-skipped"

    def check(self, bad: Trace, twin: Trace, ctx: Context) -> Evidence:
        kb = sum(1 for s in bad.sched if s["after_skip"])
        kg = sum(1 for s in twin.sched if s["after_skip"])
        return self._ev(kb > kg, "scheduler steps after a skipped step", str(kb), str(kg), None,
                        f"the LR scheduler stepped right after {kb} skipped optimizer steps in {ctx.bad_name} "
                        f"({bad.n_found_inf} skipped in all) vs {kg} in {ctx.twin_name}", bad_sched_skipped=kb,
                        twin_sched_skipped=kg, bad_skipped=bad.n_found_inf)


class ScheduleAhead(Sign):
    """At the optimizer steps actually applied, the run's LR schedule was further along than the twin's."""

    name = "schedule-ahead"
    kind = HARM

    def check(self, bad: Trace, twin: Trace, ctx: Context) -> Evidence:
        b = [s.sched for s in bad.executed]
        g = [s.sched for s in twin.executed]
        n = min(len(b), len(g))
        if not n or not (bad.sched or twin.sched):
            return self._ev(False, "schedule position at applied steps", sentence="no scheduler steps")
        diffs = [x - y for x, y in zip(b[:n], g[:n])]
        mean = sum(diffs) / n
        lb = [s.lr for s in bad.executed][0]
        lg = [s.lr for s in twin.executed][0]
        return self._ev(mean >= 0.5, "schedule lead at applied steps", f"+{fmt(mean)}", "0", None,
                        f"over the {n} optimizer steps both applied, {ctx.bad_name}'s schedule was on average "
                        f"{fmt(mean)} scheduler steps ahead of {ctx.twin_name}'s (learning rate at the first applied "
                        f"step {fmt(lb)} vs {fmt(lg)})", lead=mean, bad_first_lr=lb, twin_first_lr=lg)


# --- precision and cost -----------------------------------------------------------------------------


def _matmuls(t: Trace, phase: str) -> dict[str, int]:
    out = {"high": 0, "low": 0}
    for key, n in (t.ops.get(phase) or {}).items():
        op, _, dtype = key.partition(":")
        if op in MATMUL_OPS:
            if dtype in ("float32", "float64"):
                out["high"] += n
            elif dtype in ("float16", "bfloat16"):
                out["low"] += n
    return out


class BackwardPrecision(Sign):
    """Matrix products in the backward pass ran in lower precision than the twin's (a backward under
    autocast casts the ops of hand-written backward functions too)."""

    name = "backward-precision"
    vs_reference = False

    def check(self, bad: Trace, twin: Trace, ctx: Context) -> Evidence:
        if not bad.ops or not twin.ops:
            return self._ev(False, "backward matmul precision", sentence="ops were not recorded")
        b, g = _matmuls(bad, "backward"), _matmuls(twin, "backward")
        shown = b["low"] > g["low"] and b["high"] < g["high"]
        return self._ev(shown, "backward matmuls fp32/low", f"{b['high']}/{b['low']}", f"{g['high']}/{g['low']}", None,
                        f"backward matrix products ran {b['high']} times in float32 and {b['low']} in float16/bfloat16 "
                        f"in {ctx.bad_name}, vs {g['high']} and {g['low']} in {ctx.twin_name}",
                        bad_fp32=b["high"], bad_low=b["low"], twin_fp32=g["high"], twin_low=g["low"])


def _ops_per_step(t: Trace) -> tuple[float, float]:
    n = max(1, len([s for s in t.steps if s.opt == 0]))
    total = sum(sum(d.values()) for d in t.ops.values()) if t.ops else 0
    amp = sum(v for d in t.ops.values() for k, v in d.items() if k.startswith("_amp_")) if t.ops else 0
    return total / n, amp / n


class ExtraWork(Sign):
    """The run did more work per step than the twin: AMP scaler kernels (inf checks, unscaling,
    scale updates) on every step. Step time is reported, not judged."""

    name = "extra-work"
    vs_reference = False

    def check(self, bad: Trace, twin: Trace, ctx: Context) -> Evidence:
        if not bad.ops or not twin.ops:
            return self._ev(False, "aten ops per step", sentence="ops were not recorded")
        (tb, ab), (tg, ag) = _ops_per_step(bad), _ops_per_step(twin)
        sb, sg = bad.step_seconds(), twin.step_seconds()
        tr = sb / sg if sg and math.isfinite(sb) and math.isfinite(sg) else math.nan
        return self._ev(ab > ag and tb > tg, "aten ops per step", fmt(tb), fmt(tg), tb / tg if tg else None,
                        f"{ctx.bad_name} ran {fmt(tb)} aten ops per step ({fmt(ab)} of them AMP scaler kernels) vs "
                        f"{fmt(tg)} ({fmt(ag)}) in {ctx.twin_name}; median step time {fmt(sb * 1e3)} vs "
                        f"{fmt(sg * 1e3)} ms ({fmt(tr)}x, op recording on)", bad_ops=tb, twin_ops=tg, bad_amp_ops=ab,
                        twin_amp_ops=ag, time_ratio=tr)


class Identical(Sign):
    """The run's loss series is bit-identical to the twin's."""

    name = "identical"
    vs_reference = False  # a claim about the pair, not a failure the twin could show

    def check(self, bad: Trace, twin: Trace, ctx: Context) -> Evidence:
        b, g = bad.loss, twin.loss
        same = bool(b) and b == g
        diff = max((abs(x - y) for x, y in zip(b, g)), default=math.nan) if b and len(b) == len(g) else math.nan
        return self._ev(same, "loss curves identical?", "identical" if same else f"max diff {fmt(diff)}",
                        f"{len(g)} steps", None,
                        f"the loss series of {ctx.bad_name} and {ctx.twin_name} were "
                        + ("bit-identical" if same else f"not identical (max difference {fmt(diff)})")
                        + f" over {len(b)} steps", max_abs_diff=diff)


class AllOf(Sign):
    """Every listed sign shows."""

    def __init__(self, *signs: Sign, kind: str = HARM) -> None:
        self.signs, self.kind = signs, kind
        self.name = "+".join(s.name for s in signs)
        self.vs_reference = all(s.vs_reference for s in signs)

    def check(self, bad: Trace, twin: Trace, ctx: Context) -> Evidence:
        evs = [s.check(bad, twin, ctx) for s in self.signs]
        first = evs[0]
        values: dict[str, Any] = {}
        for e in evs:
            values.update(e.values)
        return Evidence(self.name, self.kind, all(e.shown for e in evs), first.observable, first.bad, first.twin,
                        first.ratio, "; ".join(e.sentence for e in evs), values)


# --- several ranks -------------------------------------------------------------------------------------


def _skip_pattern(t: Trace) -> list[bool]:
    return [bool(s.found_inf) for s in t.steps]


class RanksDisagree(Sign):
    """In a multi-process run, the ranks' scalers disagreed about skipping a step (each checked only
    its own shard), while the twin's ranks always agreed."""

    name = "ranks-disagree"
    kind = HARM

    def check(self, bad: Trace, twin: Trace, ctx: Context) -> Evidence:
        if len(bad.ranks) < 2 or len(twin.ranks) < 2:
            return self._ev(False, "skipped steps per rank", sentence="not a multi-process run")

        def disagreements(t: Trace) -> tuple[int, list[str]]:
            pats = [_skip_pattern(r) for r in t.ranks]
            n = min(len(p) for p in pats)
            dis = sum(1 for i in range(n) if len({p[i] for p in pats}) > 1)
            return dis, [f"{sum(p)}/{len(p)}" for p in pats]

        db, pb = disagreements(bad)
        dg, pg = disagreements(twin)
        return self._ev(db > 0 and dg == 0, "skipped steps per rank", " vs ".join(pb), " vs ".join(pg), None,
                        f"with {len(bad.ranks)} ranks, {ctx.bad_name}'s scalers skipped {' and '.join(pb)} steps and "
                        f"disagreed on {db} steps (ranks applied different updates to their shards); "
                        f"{ctx.twin_name}'s skipped {' and '.join(pg)} and disagreed on {dg}",
                        bad_disagree=db, twin_disagree=dg)
