"""Runtime specs: how `amplint verify` runs a rule's fixture pair and judges the two traces.

One small module per rule under ``amplint/runtime/specs/`` defines ``SPEC = Spec(...)``:

- the problem: optimizer kind and learning rate, number of batches, extra ``train`` keywords;
- ``check(bad, good) -> Measure``: the failure-mode predicate over the two traces, built from the
  helpers below (or written by hand);
- ``effect``: ``"numeric"`` (the default: the failure shows on this device), ``"cuda"`` (the
  failure only exists on CUDA: NEEDS CUDA on a CPU run), ``"no-cuda-host"`` (the failure only
  exists where torch sees no CUDA, e.g. a default-device scaler disabling itself: NEEDS CPU
  HOST on a machine with CUDA), ``"distributed"`` (the failure needs several processes, e.g.
  FSDP ranks disagreeing: NEEDS DISTRIBUTED, since the harness runs one process) or ``"none"``
  (no numerical harm: NO RUNTIME EFFECT; the measure still says what was observed);
- ``evidence``: a sentence template formatted with the measure's values, for the rule docs.

Nothing here imports torch: predicates read plain :class:`~amplint.runtime.trace.Trace` data.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .trace import Trace, fmt

NUMERIC, NEEDS_CUDA_EFFECT, NO_EFFECT, NO_CUDA_HOST_EFFECT = "numeric", "cuda", "none", "no-cuda-host"
DISTRIBUTED_EFFECT = "distributed"


@dataclass
class Measure:
    """The observable of one rule, measured on both fixtures."""

    observable: str
    bad: str
    good: str
    ratio: float | None
    bad_fails: bool
    good_fails: bool
    values: dict[str, Any] = field(default_factory=dict)
    sentence: str = ""  # default evidence sentence of the helper
    note: str = ""  # why the verdict came out as it did, when that is not obvious


Check = Callable[[Trace, Trace], Measure]


@dataclass(frozen=True)
class Spec:
    code: str
    check: Check
    observable: str = ""
    optimizer: str = "sgd"
    lr: float | None = None
    n_batches: int = 40
    batch_size: int = 32
    train_kwargs: dict[str, Any] = field(default_factory=dict)
    effect: str = NUMERIC
    evidence: str = ""  # template; default: the helper's sentence
    timeout_s: float | None = None
    note: str = ""  # shown in the report (e.g. why NEEDS CUDA)

    def evidence_sentence(self, m: Measure) -> str:
        if not self.evidence:
            return m.sentence
        values = {"bad": m.bad, "good": m.good, "ratio": fmt(m.ratio), **{k: fmt(v) for k, v in m.values.items()}}
        try:
            return self.evidence.format(**values)
        except (KeyError, IndexError, ValueError):
            return m.sentence


# --- helpers: each returns a check -------------------------------------------------------


def code_span(text: str) -> str:
    """Markdown inline code that survives backticks inside ``text``."""
    text = str(text)
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def _first_line(text: str) -> str:
    return (text or "").strip().splitlines()[0] if (text or "").strip() else ""


def _short(text: str, limit: int = 110) -> str:
    """The first sentence of a long message (warnings can run to several sentences)."""
    text = _first_line(text)
    if len(text) <= limit:
        return text
    cut = text.find(". ", 20)
    if 0 < cut < limit:
        return text[: cut + 1]
    return text[: limit - 1] + "…"


def describe_end(t: Trace) -> str:
    """``ok, loss 10.18 -> 0.1335`` / ``RuntimeError at step 1`` / ``timed out``."""
    if t.status == "ok":
        loss = t.loss
        return f"ok, loss {fmt(loss[0])} -> {fmt(loss[-1])}" if loss else "ok"
    return t.summary()


def raises(exc_type: str, text: str = "", *, good_must_train: bool = False) -> Check:
    """bad.py raises ``exc_type`` with ``text`` in its message; good.py raises nothing."""

    def check(bad: Trace, good: Trace) -> Measure:
        e = bad.exception or {}
        hit = bad.raised_like(exc_type, text)
        good_fails = good.status != "ok" or (good_must_train and not good.trained())
        msg = _first_line(e.get("message", ""))
        where = f" (fixture line {e['fixture_line']})" if e.get("fixture_line") else ""
        values = {"exc_type": e.get("type"), "message": msg, "exception_md": code_span(f"{e.get('type')}: {msg}"),
                  "step_index": e.get("step_index"),
                  "fixture_line": e.get("fixture_line"), "good_first_loss": good.first_loss,
                  "good_final_loss": good.final_loss, "good_steps": good.n_steps}
        bad_text = f"{e.get('type')}: {msg}" if bad.raised else describe_end(bad)
        sentence = (f"bad.py raised {values['exception_md']} after {e.get('step_index')} completed "
                    f"optimizer step(s){where}; good.py ran {good.n_steps} steps without an exception"
                    + (f" (loss {fmt(good.first_loss)} -> {fmt(good.final_loss)})." if good.loss else "."))
        note = "" if hit else f"expected {exc_type} containing {text!r}"
        return Measure(f"exception {exc_type}", bad_text, describe_end(good), None, hit, good_fails,
                       values, sentence, note)

    return check


def update_ratio(max_ratio: float = 1e-2) -> Check:
    """bad.py's mean update size ‖Δθ‖ is below ``max_ratio`` x good.py's (compared with 1/scale)."""

    def check(bad: Trace, good: Trace) -> Measure:
        bu, gu = bad.mean_update, good.mean_update
        ratio = bu / gu if gu and math.isfinite(gu) and math.isfinite(bu) else math.nan
        scale = bad.final_scale
        inv = 1.0 / scale if scale else math.nan
        hit = bad.status == "ok" and math.isfinite(ratio) and ratio < max_ratio
        values = {"bad_update": bu, "good_update": gu, "update_ratio": ratio, "scale": scale, "inv_scale": inv,
                  "first_loss": bad.first_loss, "bad_loss": bad.final_loss, "good_loss": good.final_loss,
                  "ratio_over_inv_scale": ratio / inv if inv and math.isfinite(inv) else math.nan}
        sentence = (f"mean SGD update ‖Δθ‖ {fmt(bu)} in bad.py vs {fmt(gu)} in good.py: ratio {fmt(ratio)}, "
                    f"1/scale = {fmt(inv)}; final loss {fmt(bad.final_loss)} vs {fmt(good.final_loss)} "
                    f"(start {fmt(bad.first_loss)}).")
        return Measure("mean update ‖Δθ‖ (ratio ~ 1/scale)", f"{fmt(bu)} (loss {fmt(bad.final_loss)})",
                       f"{fmt(gu)} (loss {fmt(good.final_loss)})", ratio, hit, not good.trained(), values, sentence,
                       "" if hit else f"update ratio {fmt(ratio)}, 1/scale = {fmt(inv)}")

    return check


def loss_ratio(min_ratio: float = 10.0, key: str = "loss") -> Check:
    """bad.py's final ``key`` is ``min_ratio`` x good.py's or worse (non-finite counts); good trains.

    ``key`` names another series of the returned dict (e.g. an auxiliary loss); good.py must
    then bring that series below half its first value.
    """

    def _trained(t: Trace) -> bool:
        if key == "loss":
            return t.trained()
        s = t.series(key)
        return t.status == "ok" and len(s) > 1 and math.isfinite(s[-1]) and s[-1] < 0.5 * s[0]

    def check(bad: Trace, good: Trace) -> Measure:
        if key == "loss":
            bl, gl, first = bad.final_loss, good.final_loss, bad.first_loss
        else:
            bs, gs = bad.series(key), good.series(key)
            bl, gl = (bs[-1] if bs else math.nan), (gs[-1] if gs else math.nan)
            first = bs[0] if bs else math.nan
        if not math.isfinite(bl):
            ratio = math.inf
        else:
            ratio = bl / gl if gl > 0 else math.nan
        nonfinite = bad.first_nonfinite_step
        hit = bad.status == "ok" and (ratio >= min_ratio)
        values = {"first_loss": first, "bad_loss": bl, "good_loss": gl, "loss_ratio": ratio,
                  "first_nonfinite_step": nonfinite, "bad_skipped": bad.n_skipped, "good_skipped": good.n_skipped}
        name = "loss" if key == "loss" else key
        sentence = (f"final {name} {fmt(bl)} in bad.py vs {fmt(gl)} in good.py (start {fmt(first)}, "
                    f"ratio {fmt(ratio)})" + (f"; parameters non-finite from step {nonfinite}" if nonfinite is not None
                                              else "") + ".")
        return Measure(f"final {name}", fmt(bl), fmt(gl), ratio, hit, not _trained(good), values, sentence)

    return check


def metric_scaled(key: str = "val_loss", min_ratio: float = 10.0, rel_tol: float = 0.01,
                  first_only: bool = False) -> Check:
    """bad.py reports ``key`` multiplied by the loss scale: every bad/good ratio equals a scale.

    ``first_only``: compare the first values only (the later ones differ when the inflated
    metric also changes the training, e.g. a penalty added to the loss).
    """

    def check(bad: Trace, good: Trace) -> Measure:
        b, g = bad.series(key), good.series(key)
        if first_only:
            b, g = b[:1], g[:1]
        ratios = [x / y for x, y in zip(b, g) if y and math.isfinite(x) and math.isfinite(y)]
        scales = sorted({s for s in bad.scales} | {s for _v, s in bad.scaled} | {s.scale for s in bad.steps if s.scale})
        matched = []
        for r in ratios:
            best = min(scales, key=lambda s: abs(r / s - 1.0)) if scales else None
            matched.append(best if best is not None and abs(r / best - 1.0) <= rel_tol else None)
        ratio = statistics.median(ratios) if ratios else math.nan
        hit = bad.status == "ok" and bool(ratios) and all(m is not None for m in matched) and ratio >= min_ratio
        scale_seen = matched[-1] if matched and matched[-1] is not None else (bad.final_scale or math.nan)
        values = {"key": key, "bad_metric": b[-1] if b else math.nan, "good_metric": g[-1] if g else math.nan,
                  "metric_ratio": ratio, "scale": scale_seen, "n": len(ratios)}
        which = "first value" if first_only else f"all {len(ratios)} values"
        sentence = (f"reported {key} {fmt(values['bad_metric'])} in bad.py vs {fmt(values['good_metric'])} in "
                    f"good.py: ratio {fmt(ratio)} = the loss scale {fmt(scale_seen)} ({which}).")
        note = "" if hit else f"ratios {[fmt(r) for r in ratios]} vs scales {[fmt(s) for s in scales]}"
        return Measure(f"{key} ratio = scale", fmt(values["bad_metric"]), fmt(values["good_metric"]), ratio, hit,
                       good.status != "ok", values, sentence, note)

    return check


def skipped_steps(min_fraction: float = 0.5, max_good_fraction: float = 0.25) -> Check:
    """bad.py skips at least ``min_fraction`` of its optimizer steps; good.py few."""

    def check(bad: Trace, good: Trace) -> Measure:
        bs, bn, gs, gn = bad.n_skipped, bad.n_steps, good.n_skipped, good.n_steps
        hit = bad.status == "ok" and bn > 0 and bs >= min_fraction * bn
        good_fails = good.status != "ok" or (gn > 0 and gs > max_good_fraction * gn)
        values = {"bad_skipped": bs, "bad_steps": bn, "good_skipped": gs, "good_steps": gn,
                  "bad_loss": bad.final_loss, "good_loss": good.final_loss, "first_loss": bad.first_loss,
                  "bad_scale": bad.final_scale, "good_scale": good.final_scale,
                  "bad_scalers": len(bad.scalers), "good_scalers": len(good.scalers)}
        sentence = (f"bad.py skipped {bs}/{bn} optimizer steps (loss {fmt(bad.first_loss)} -> {fmt(bad.final_loss)}); "
                    f"good.py skipped {gs}/{gn} (loss -> {fmt(good.final_loss)}).")
        return Measure("skipped steps", f"{bs}/{bn}", f"{gs}/{gn}", None, hit, good_fails,
                       values, sentence)

    return check


def extra_skipped(min_extra: int = 4) -> Check:
    """bad.py skips at least ``min_extra`` more optimizer steps than good.py (a re-calibration)."""

    def check(bad: Trace, good: Trace) -> Measure:
        bs, gs = bad.n_skipped, good.n_skipped
        extra = bs - gs
        hit = bad.status == "ok" and extra >= min_extra
        values = {"bad_skipped": bs, "good_skipped": gs, "extra_skipped": extra, "bad_steps": bad.n_steps,
                  "good_steps": good.n_steps, "bad_scale": bad.final_scale, "good_scale": good.final_scale,
                  "bad_loss": bad.final_loss, "good_loss": good.final_loss, "bad_scalers": len(bad.scalers)}
        sentence = (f"bad.py skipped {bs}/{bad.n_steps} optimizer steps, good.py {gs}/{good.n_steps} "
                    f"({extra} extra); final scale {fmt(bad.final_scale)} vs {fmt(good.final_scale)}.")
        return Measure("skipped steps", f"{bs}/{bad.n_steps}", f"{gs}/{good.n_steps}", None, hit,
                       good.status != "ok", values, sentence)

    return check


def scale_ratio(min_ratio: float = 8.0) -> Check:
    """bad.py's final loss scale differs from good.py's by ``min_ratio`` or more (either way)."""

    def check(bad: Trace, good: Trace) -> Measure:
        bsc, gsc = bad.final_scale, good.final_scale
        ratio = bsc / gsc if bsc and gsc else math.nan
        hit = bad.status == "ok" and math.isfinite(ratio) and (ratio >= min_ratio or ratio <= 1 / min_ratio)
        values = {"bad_scale": bsc, "good_scale": gsc, "scale_ratio": ratio, "bad_updates": len(bad.scales),
                  "good_updates": len(good.scales)}
        sentence = (f"final loss scale {fmt(bsc)} in bad.py vs {fmt(gsc)} in good.py (ratio {fmt(ratio)}; "
                    f"{len(bad.scales)} vs {len(good.scales)} scale updates).")
        return Measure("final loss scale", fmt(bsc), fmt(gsc), ratio, hit, good.status != "ok", values, sentence)

    return check


def zero_grads(min_ratio: float = 5.0, min_fraction: float = 0.05) -> Check:
    """bad.py's optimizer sees many more exactly-zero gradient entries than good.py's (underflow)."""

    def check(bad: Trace, good: Trace) -> Measure:
        bz, gz = bad.mean_zero_grad_fraction(), good.mean_zero_grad_fraction()
        ratio = bz / gz if gz and math.isfinite(gz) and gz > 0 else (math.inf if bz > 0 else math.nan)
        hit = bad.status == "ok" and math.isfinite(bz) and bz >= min_fraction and (ratio >= min_ratio)
        values = {"bad_zero": bz, "good_zero": gz, "zero_ratio": ratio, "bad_loss": bad.final_loss,
                  "good_loss": good.final_loss, "first_loss": bad.first_loss}
        sentence = (f"mean fraction of exactly-zero gradient entries {fmt(bz)} in bad.py vs {fmt(gz)} in good.py; "
                    f"final loss {fmt(bad.final_loss)} vs {fmt(good.final_loss)}.")
        return Measure("zero-gradient fraction", fmt(bz), fmt(gz), ratio, hit, good.status != "ok", values, sentence)

    return check


def warns(category: str, text: str = "") -> Check:
    """bad.py emits a ``category`` warning containing ``text``; good.py does not."""

    def check(bad: Trace, good: Trace) -> Measure:
        bw, gw = bad.warnings_like(category, text), good.warnings_like(category, text)
        nb, ng = sum(w.get("count", 1) for w in bw), sum(w.get("count", 1) for w in gw)
        msgs = list(dict.fromkeys(_short(w["message"]) for w in bw))
        same = identical_series(bad, good)
        loss_text = ("the loss curves were bit-identical" if same else
                     f"final loss {fmt(bad.final_loss)} vs {fmt(good.final_loss)}")
        values = {"category": category, "message": msgs[0] if msgs else "", "messages_md": "; ".join(map(code_span, msgs)),
                  "bad_count": nb, "good_count": ng, "identical": same, "loss_text": loss_text,
                  "bad_loss": bad.final_loss, "good_loss": good.final_loss}
        sentence = f"bad.py emitted {nb} {category} ({values['messages_md']}), good.py {ng}; {loss_text}."
        return Measure(category, f"{nb} x {category}", f"{ng}", None, bool(bw) and bad.status == "ok",
                       good.status != "ok" or bool(gw), values, sentence)

    return check


def identical_series(bad: Trace, good: Trace, key: str = "loss") -> bool:
    b, g = bad.series(key), good.series(key)
    return bool(b) and b == g


def identical(key: str = "loss") -> Check:
    """For rules without numerical harm: report whether the two runs gave the same ``key`` series."""

    def check(bad: Trace, good: Trace) -> Measure:
        b, g = bad.series(key), good.series(key)
        diff = max((abs(x - y) for x, y in zip(b, g)), default=math.nan) if b and len(b) == len(g) else math.nan
        same = bool(b) and b == g
        values = {"max_abs_diff": diff, "bad_loss": bad.final_loss, "good_loss": good.final_loss, "n": len(b)}
        sentence = (f"the {key} series of bad.py and good.py were "
                    + ("bit-identical" if same else f"within {fmt(diff)} of each other")
                    + f" over {len(b)} steps (final {fmt(bad.final_loss)} vs {fmt(good.final_loss)}).")
        return Measure(f"{key} curves (identical?)", f"{key} {fmt(bad.final_loss)}",
                       f"{key} {fmt(good.final_loss)}" + (" (identical)" if same else f" (max diff {fmt(diff)})"),
                       None, not same, good.status != "ok", values, sentence)

    return check


def all_of(*checks: Check) -> Check:
    """Every check must show the failure; the measure shown is the first one's."""

    def check(bad: Trace, good: Trace) -> Measure:
        measures = [c(bad, good) for c in checks]
        first = measures[0]
        first.bad_fails = all(m.bad_fails for m in measures)
        first.good_fails = any(m.good_fails for m in measures)
        first.sentence = " ".join(m.sentence for m in measures)
        for m in measures[1:]:
            first.values.update({k: v for k, v in m.values.items() if k not in first.values})
        first.note = "; ".join(m.note for m in measures if m.note)
        return first

    return check
