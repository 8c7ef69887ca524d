"""Runtime specs and the judgement of a run against its twin.

One small module per rule under ``amplint/runtime/specs/`` defines ``SPEC = Spec(...)``:

- the problem: optimizer kind and learning rate, number of batches, extra ``train`` keywords,
  and how to run (``world_size`` ranks, CUDA autocast's op policy on CPU, op recording);
- ``signs``: the signs of every documented variant of the failure mode (``signs.py``), each
  ``harm`` or ``mechanism``;
- ``needs``: hardware the failure needs (``cuda``, ``cpu-host``: a host where torch sees no
  CUDA, ``distributed``), reported when absent, after checking what can be checked;
- ``expect``: the verdict the fixture pair must reach (CONFIRMED, or MECHANISM ONLY for a rule
  whose harm is not numerical); ``no_effect``: the rule claims no runtime effect, which is then
  measured (bit-identical runs).

Every verdict comes from the runs of this invocation: the rule's run (``bad``), its twin (the
fixed loop, ``good``) and the FP32 reference (the twin with autocast and GradScalers disabled).

Nothing here imports torch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from .signs import HARM, MECHANISM, Context, Evidence, Sign
from .trace import CRASHED, ERROR, OK, TIMEOUT, Trace, fmt, progress

CONFIRMED = "CONFIRMED"
MECHANISM_ONLY = "MECHANISM ONLY"
NOT_REPRODUCED = "NOT REPRODUCED"
NEEDS_CUDA = "NEEDS CUDA"
NEEDS_CPU_HOST = "NEEDS CPU HOST"
NEEDS_DISTRIBUTED = "NEEDS DISTRIBUTED"
NO_RUNTIME_EFFECT = "NO RUNTIME EFFECT"
GOOD_FAILS = "GOOD FAILS"
NO_SPEC = "NO SPEC"
NO_TWIN = "NO TWIN"
RUN_ERROR = "ERROR"
LINT_MISMATCH = "LINT MISMATCH"

NEEDS = (NEEDS_CUDA, NEEDS_CPU_HOST, NEEDS_DISTRIBUTED)
VERDICT_HELP = {
    CONFIRMED: "the harm was measured: bad.py shows it, the twin trains and matches its FP32 reference",
    MECHANISM_ONLY: "the mechanism was measured (e.g. scaled gradients clipped), the harm is not visible at this size",
    NEEDS_CUDA: "the failure needs CUDA (or float16 CPU autocast, missing here); the twin was checked",
    NEEDS_CPU_HOST: "the failure needs a host where torch sees no CUDA; the twin was checked",
    NEEDS_DISTRIBUTED: "the failure needs several processes, which could not run here; the twin was checked",
    NO_RUNTIME_EFFECT: "the rule claims no runtime effect, and the runs were measured bit-identical",
    NOT_REPRODUCED: "bad.py showed none of the failure's signs",
    GOOD_FAILS: "the twin raised, did not train, strayed from its FP32 reference or showed the failure itself",
    NO_SPEC: "the rule has fixtures but no runtime spec under amplint/runtime/specs/",
    NO_TWIN: "amplint has no fix for this finding, so there is no twin to compare with",
    RUN_ERROR: "a run crashed, timed out or could not be set up",
    LINT_MISMATCH: "the linter does not report the rule on bad.py only",
}

MIN_DROP = 0.2  # the twin's loss must end at most 0.8x its first value ...
FP32_BAND = (0.5, 2.0)  # ... and make between half and twice the FP32 reference's log-progress


@dataclass(frozen=True)
class Spec:
    code: str
    signs: tuple[Sign, ...] = ()
    optimizer: str = "sgd"
    lr: float | None = None
    n_batches: int = 40
    batch_size: int = 32
    train_kwargs: dict[str, Any] = field(default_factory=dict)
    needs: str = ""  # "" | "cuda" | "cpu-host" | "distributed"
    world_size: int = 1
    emulate_cuda_autocast: bool = False
    record_ops: bool = False
    expect: str = CONFIRMED
    no_effect: bool = False
    fp16: bool = True  # the loops use float16 autocast (on CPU: needs torch's fp16 CPU autocast)
    min_drop: float = MIN_DROP
    fp32_band: tuple[float, float] = FP32_BAND
    timeout_s: float | None = None
    context: str = ""  # what the evidence sentence starts with, e.g. "with SGD"
    note: str = ""  # shown in the report

    def run_options(self) -> dict[str, Any]:
        return {"emulate_cuda_autocast": self.emulate_cuda_autocast, "record_ops": self.record_ops}


@dataclass
class Judgement:
    verdict: str
    evidence: list[Evidence] = field(default_factory=list)
    twin: dict[str, Any] = field(default_factory=dict)
    note: str = ""

    def shown(self, kind: str | None = None) -> list[Evidence]:
        return [e for e in self.evidence if e.shown and (kind is None or e.kind == kind)]

    @property
    def lead(self) -> Evidence | None:
        """The evidence the table shows: the first harm shown, else the first mechanism, else the first."""
        return (self.shown(HARM) or self.shown(MECHANISM) or self.evidence or [None])[0]

    def values(self) -> dict[str, Any]:
        out: dict[str, Any] = dict(self.twin)
        for e in reversed(self.evidence):
            out.update(e.values)
        for e in self.shown():
            out.update(e.values)
        return out


def passes(spec: Spec | None, verdict: str) -> bool:
    """Does this verdict pass the rule's verification (exit status 0)?"""
    if spec is None:
        return False
    if verdict == CONFIRMED or verdict in NEEDS:
        return True
    if verdict == MECHANISM_ONLY:
        return spec.expect == MECHANISM_ONLY
    if verdict == NO_RUNTIME_EFFECT:
        return spec.no_effect
    return False


# --- the twin ---------------------------------------------------------------------------------


def twin_check(spec: Spec, good: Trace, ref: Trace | None, ctx: Context) -> tuple[list[str], dict[str, Any]]:
    """What is wrong with the twin (empty: nothing), and its numbers.

    The twin must run to its end, its loss must fall by ``min_drop`` of its first value, its
    log-progress must lie within ``fp32_band`` of the FP32 reference's, and it must not show the
    failure's signs against that reference."""
    who = ctx.twin_name
    problems: list[str] = []
    values: dict[str, Any] = {"twin_steps": good.n_steps}
    if good.status != OK:
        e = good.exception or {}
        return [f"{who} {good.summary()}" + (f": {e.get('type')}: {(e.get('message') or '').splitlines()[0][:160]}"
                                               if e else "")], values
    loss = good.loss
    if not loss:
        return [f"{who} reported no loss (return {{'loss': [...]}} from train, or scale the loss)"], values
    first, end = loss[0], good.tail()
    values.update(twin_first_loss=first, twin_loss=end)
    if not all(math.isfinite(v) for v in loss):
        problems.append(f"{who}'s loss went non-finite")
    elif not (end <= (1 - spec.min_drop) * first if first > 0 else end < first):
        problems.append(f"{who} did not train: loss {fmt(first)} -> {fmt(end)} (it must fall by "
                        f"{spec.min_drop:.0%} of its first value)")
    if ref is not None:
        if ref.status != OK:
            problems.append(f"the FP32 reference run of {who} {ref.summary()}")
        elif ref.loss:
            pg, pr = progress(first, end), progress(ref.first_loss, ref.tail())
            share = pg / pr if pr and math.isfinite(pr) and pr > 0 else math.nan
            values.update(fp32_loss=ref.tail(), fp32_share=share)
            lo, hi = spec.fp32_band
            if not problems and math.isfinite(share) and not lo <= share <= hi:
                problems.append(f"{who} strayed from its FP32 reference: loss {fmt(first)} -> {fmt(end)} vs "
                                f"-> {fmt(ref.tail())} in FP32 ({fmt(share)}x FP32's log-progress; allowed "
                                f"{lo}-{hi}x)")
        if not problems:
            rctx = Context(ctx.device, None, who, "its FP32 reference")
            for sign in spec.signs:
                if sign.vs_reference:
                    e = sign.check(good, ref, rctx)
                    if e.shown:
                        problems.append(f"{who} shows the failure against its FP32 reference: {e.sentence}")
    return problems, values


def twin_sentence(values: dict[str, Any], who: str = "good.py") -> str:
    s = f"{who} trained {values.get('twin_steps')} steps, loss {fmt(values.get('twin_first_loss'))} -> " \
        f"{fmt(values.get('twin_loss'))}"
    if values.get("fp32_loss") is not None:
        s += f" (FP32 reference -> {fmt(values['fp32_loss'])}, {fmt(values.get('fp32_share'))}x its log-progress)"
    return s


# --- the verdict --------------------------------------------------------------------------------


def judge(spec: Spec, bad: Trace, good: Trace, ref: Trace | None, device: str, env: dict[str, Any],
          names: tuple[str, str] = ("bad.py", "good.py")) -> Judgement:
    """The runtime verdict of one rule from its three runs."""
    broken = [(n, t) for n, t in ((names[0], bad), (names[1], good), (f"{names[1]} (FP32 reference)", ref))
              if t is not None and t.status in (CRASHED, TIMEOUT, ERROR)]
    if broken:
        return Judgement(RUN_ERROR, note="; ".join(f"{n} {t.summary()}" for n, t in broken))
    ctx = Context(device, ref, names[0], names[1])
    try:
        problems, twin = twin_check(spec, good, ref, ctx)
        evidence = [s.check(bad, good, ctx) for s in spec.signs]
    except Exception as e:  # noqa: BLE001 - a broken predicate is reported, not fatal
        return Judgement(RUN_ERROR, note=f"a sign raised {type(e).__name__}: {e}")
    j = Judgement(NOT_REPRODUCED, evidence, twin)
    if problems:
        j.verdict, j.note = GOOD_FAILS, "; ".join(problems)
        return j
    harm, mech = j.shown(HARM), j.shown(MECHANISM)
    if spec.no_effect:
        same = [e for e in evidence if e.sign == "identical"]
        if same and same[0].shown:
            j.verdict = NO_RUNTIME_EFFECT
        else:
            j.note = f"the rule claims no runtime effect, but {same[0].sentence if same else 'the runs differ'}"
        return j
    if harm:
        j.verdict = CONFIRMED
        return j
    gate = _hardware_gate(spec, bad, device, env)
    if gate:
        j.verdict, j.note = gate
        if mech:
            j.note += "; measured here: " + "; ".join(e.sentence for e in mech)
        return j
    if mech:
        j.verdict = MECHANISM_ONLY
        unseen = [e.sentence for e in evidence if e.kind == HARM and not e.shown]
        j.note = ("harm not visible at this size: " + "; ".join(unseen))[:600] if unseen else \
            "the rule's harm is not numerical"
        return j
    j.note = "; ".join(e.sentence for e in evidence)[:800]
    return j


def _hardware_gate(spec: Spec, bad: Trace, device: str, env: dict[str, Any]) -> tuple[str, str] | None:
    if device == "cpu" and spec.fp16 and not env.get("fp16_cpu_autocast", True):
        return NEEDS_CUDA, (f"torch {env.get('torch')} has no float16 CPU autocast, so the fixtures cannot show "
                            "float16 behaviour on CPU; the twin trained")
    if spec.needs == "cuda" and device == "cpu" and bad.emulation != "cuda-autocast":
        return NEEDS_CUDA, "the failure needs CUDA autocast, which could not be applied on CPU; the twin trained"
    if spec.needs == "cpu-host" and env.get("cuda_available") and bad.enabled_scalers():
        return NEEDS_CPU_HOST, ("torch sees CUDA here, so the default-device scaler was enabled "
                                f"({bad.enabled_scalers()}/{len(bad.scalers)} enabled) and the failure cannot occur; "
                                "the twin trained")
    if spec.world_size > 1 and not bad.ranks:
        return NEEDS_DISTRIBUTED, ("the failure needs several processes, which could not be started here; "
                                   "the twin trained on one")
    return None


def evidence_sentence(spec: Spec, j: Judgement, names: tuple[str, str] = ("bad.py", "good.py")) -> str:
    parts: list[str] = []
    evs = j.evidence if j.verdict == NO_RUNTIME_EFFECT else j.shown(HARM) + j.shown(MECHANISM)
    for e in evs:  # a combined sign repeats the sentences of its parts
        if e.sentence and not any(e.sentence in p for p in parts):
            parts.append(e.sentence)
    head = (spec.context + ": " if spec.context else "") + "; ".join(parts)
    tail = twin_sentence(j.twin, names[1]) if j.twin.get("twin_loss") is not None else ""
    text = head.rstrip("; ")
    if tail:
        text = f"{text}; {tail}" if text else tail
    return text + "." if text else ""
