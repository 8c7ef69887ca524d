"""`amplint verify`: run each rule's fixture pair, judge the traces, check the linter agrees.

Flow: discover ``fixtures/<CODE>/{bad,good}.py`` -> lint both in-process (the pairing check) ->
probe the device in a child -> fork one child per fixture run (torch was imported once, by the
parent, which never runs a kernel or touches CUDA) -> each rule's spec turns the two traces into
a :class:`~amplint.runtime.spec.Measure` -> a verdict.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .spec import (
    DISTRIBUTED_EFFECT,
    NEEDS_CUDA_EFFECT,
    NO_CUDA_HOST_EFFECT,
    NO_EFFECT,
    Measure,
    Spec,
)
from .trace import CRASHED, ERROR, TIMEOUT, Trace

CONFIRMED = "CONFIRMED"
NOT_REPRODUCED = "NOT REPRODUCED"
NEEDS_CUDA = "NEEDS CUDA"
NEEDS_CPU_HOST = "NEEDS CPU HOST"
NEEDS_DISTRIBUTED = "NEEDS DISTRIBUTED"
NO_RUNTIME_EFFECT = "NO RUNTIME EFFECT"
GOOD_FAILS = "GOOD FAILS"
NO_SPEC = "NO SPEC"
RUN_ERROR = "ERROR"
LINT_MISMATCH = "LINT MISMATCH"

PASSING = (CONFIRMED, NEEDS_CUDA, NEEDS_CPU_HOST, NEEDS_DISTRIBUTED, NO_RUNTIME_EFFECT)
VERDICT_HELP = {
    CONFIRMED: "bad.py shows the failure, good.py does not",
    NOT_REPRODUCED: "bad.py did not show the failure",
    NEEDS_CUDA: "the failure only exists on CUDA (or this torch lacks fp16 CPU autocast)",
    NEEDS_CPU_HOST: "the failure only exists where torch sees no CUDA (this machine has CUDA)",
    NEEDS_DISTRIBUTED: "the failure needs several processes (the harness runs one)",
    NO_RUNTIME_EFFECT: "declared: the harm is not numerical; the measure says what was observed",
    GOOD_FAILS: "good.py shows the failure (or does not train)",
    NO_SPEC: "the rule has fixtures but no runtime spec under amplint/runtime/specs/",
    RUN_ERROR: "a fixture run crashed, timed out or could not be set up",
    LINT_MISMATCH: "the linter does not report the rule on bad.py only",
}

_CODE_DIR = re.compile(r"^AMP\d{3}$")


@dataclass
class RuleResult:
    code: str
    name: str
    verdict: str
    runtime_verdict: str
    observable: str = ""
    bad: str = ""
    good: str = ""
    ratio: float | None = None
    evidence: str = ""
    evidence_line: str = ""
    note: str = ""
    lint_ok: bool = True
    lint_detail: str = ""
    values: dict[str, Any] = field(default_factory=dict)
    traces: dict[str, Trace] = field(default_factory=dict)
    spec: Spec | None = None

    @property
    def passed(self) -> bool:
        return self.verdict in PASSING


@dataclass
class VerifyRun:
    device: str
    env: dict[str, Any]
    seed: int
    fixtures_dir: Path
    results: list[RuleResult]
    wall_s: float = 0.0

    @property
    def exit_code(self) -> int:
        return 0 if all(r.passed for r in self.results) else 1

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self.results:
            out[r.verdict] = out.get(r.verdict, 0) + 1
        return out


# --- discovery and selection ---------------------------------------------------------------


def default_fixtures_dir() -> Path:
    """The project's own fixtures: the checkout's ``fixtures/`` next to the package.

    Never the current directory: ``verify`` executes the fixtures it finds, so it runs only the
    project's, or a folder the user names with ``--fixtures``."""
    import sys

    pkg = Path(__file__).resolve().parents[1]
    for cand in (pkg.parent / "fixtures", pkg / "fixtures", Path(sys.prefix) / "share" / "amplint" / "fixtures"):
        if cand.is_dir() and discover(cand):
            return cand
    return pkg.parent / "fixtures"


def discover(fixtures_dir: Path) -> dict[str, Path]:
    out = {}
    if not fixtures_dir.is_dir():
        return out
    for p in sorted(fixtures_dir.iterdir()):
        if p.is_dir() and _CODE_DIR.match(p.name) and (p / "bad.py").is_file() and (p / "good.py").is_file():
            out[p.name] = p
    return out


def select_codes(codes: list[str], selectors: list[str] | None) -> list[str]:
    """Exact codes or prefixes (``AMP0``), or ``ALL``; no selector = all."""
    if not selectors:
        return list(codes)
    sel = [s.strip().upper() for s in selectors if s.strip()]
    if "ALL" in sel:
        return list(codes)
    return [c for c in codes if any(c.startswith(s) for s in sel)]


# --- the pairing check (no torch) ----------------------------------------------------------


def pairing_check(code: str, rule_dir: Path) -> tuple[bool, str]:
    """The linter (every rule selected) reports ``code`` on bad.py and nothing on good.py."""
    from ..engine import lint_source
    from ..rules import rule_by_code

    if rule_by_code(code) is None:
        return False, f"{code} is not a registered rule"
    problems = []
    bad = rule_dir / "bad.py"
    good = rule_dir / "good.py"
    bad_diags = lint_source(bad.read_bytes(), str(bad), select=["ALL"])
    rows = [d.location.row for d in bad_diags if d.code == code]
    if not rows:
        problems.append(f"bad.py: {code} not reported")
    good_diags = lint_source(good.read_bytes(), str(good), select=["ALL"])
    if good_diags:
        problems.append("good.py: " + ", ".join(f"{d.code} line {d.location.row}" for d in good_diags))
    if problems:
        return False, "; ".join(problems)
    return True, f"bad.py: {code} on line{'s' if len(rows) > 1 else ''} {', '.join(map(str, rows))}; good.py: clean"


# --- judging ---------------------------------------------------------------------------------


def judge(spec: Spec, bad: Trace, good: Trace, device: str, env: dict[str, Any]) -> tuple[str, Measure | None, str]:
    """The runtime verdict for one rule from its two traces (and the measure behind it)."""
    broken = [(n, t) for n, t in (("bad.py", bad), ("good.py", good)) if t.status in (CRASHED, TIMEOUT, ERROR)]
    if broken:
        return RUN_ERROR, None, "; ".join(f"{n} {t.summary()}" for n, t in broken)
    try:
        m = spec.check(bad, good)
    except Exception as e:  # noqa: BLE001 - a broken predicate is reported, not fatal
        return RUN_ERROR, None, f"the spec's check raised {type(e).__name__}: {e}"
    if spec.effect == NO_EFFECT:
        if good.status != "ok" or bad.status != "ok":
            who = "good.py" if good.status != "ok" else "bad.py"
            return (GOOD_FAILS if who == "good.py" else NOT_REPRODUCED), m, f"{who} {(good if who == 'good.py' else bad).summary()}"
        return NO_RUNTIME_EFFECT, m, m.note
    if spec.effect == DISTRIBUTED_EFFECT:
        if good.status != "ok":
            return GOOD_FAILS, m, f"good.py {good.summary()}"
        return NEEDS_DISTRIBUTED, m, spec.note or "the failure needs a multi-process launch"
    if spec.effect == NO_CUDA_HOST_EFFECT and env.get("cuda_available"):
        return NEEDS_CPU_HOST, m, spec.note or "the failure only exists on a host without CUDA"
    if device == "cpu" and spec.effect == NEEDS_CUDA_EFFECT:
        return NEEDS_CUDA, m, spec.note or "the failure only exists on CUDA; measured on CPU"
    if device == "cpu" and not env.get("fp16_cpu_autocast", True):
        return NEEDS_CUDA, m, "this torch has no float16 CPU autocast: the fixtures cannot show fp16 behaviour on CPU"
    if m.good_fails:
        return GOOD_FAILS, m, m.note or f"good.py: {good.summary()}"
    if m.bad_fails:
        return CONFIRMED, m, m.note
    return NOT_REPRODUCED, m, m.note or f"bad.py: {bad.summary()}"


def evidence_line(r: RuleResult, device: str, env: dict[str, Any]) -> str:
    where = "CUDA" if device == "cuda" else "CPU"
    ctx = f"`amplint verify` on {where}, torch {env.get('torch')}"
    if device == "cuda" and env.get("device_name"):
        ctx += f", {env['device_name']}"
    if r.verdict == CONFIRMED:
        return f"Confirmed ({ctx}): {r.evidence}"
    if r.verdict == NEEDS_CUDA:
        return f"Needs CUDA to reproduce; it does not show on CPU ({ctx}): {r.evidence}"
    if r.verdict == NEEDS_CPU_HOST:
        return f"Shows only on a host without CUDA; not reproduced here ({ctx}): {r.evidence}"
    if r.verdict == NEEDS_DISTRIBUTED:
        return f"Needs a multi-process launch to reproduce; on one process ({ctx}): {r.evidence}"
    if r.verdict == NO_RUNTIME_EFFECT:
        return f"No numerical effect ({ctx}): {r.evidence}"
    return ""


# --- the run ---------------------------------------------------------------------------------


def run_verify(*, device: str, env: dict[str, Any], fixtures_dir: Path, select: list[str] | None, seed: int = 0,
               timeout: float = 60.0, jobs: int = 1, progress: Callable[[str], None] | None = None) -> VerifyRun:
    import torch

    from ..rules import rule_by_code
    from . import isolate
    from .instrument import run_fixture
    from .specs import all_specs

    t0 = time.perf_counter()
    # process-global and slow the first time: once here, inherited by every forked run
    torch.use_deterministic_algorithms(True, warn_only=True)
    found = discover(fixtures_dir)
    codes = select_codes(list(found), select)
    specs = all_specs()
    results: dict[str, RuleResult] = {}
    job_list: list[isolate.Job] = []
    for code in codes:
        rule = rule_by_code(code)
        name = rule.name if rule else "(unregistered)"
        lint_ok, lint_detail = pairing_check(code, found[code])
        spec = specs.get(code)
        r = RuleResult(code, name, NO_SPEC, NO_SPEC, lint_ok=lint_ok, lint_detail=lint_detail, spec=spec)
        results[code] = r
        if spec is None:
            r.note = f"no runtime spec: add amplint/runtime/specs/{code.lower()}.py"
            continue
        for kind in ("bad", "good"):
            job_list.append(isolate.Job(
                (code, kind), run_fixture, (str(found[code] / f"{kind}.py"),),
                {"device": device, "optimizer": spec.optimizer, "lr": spec.lr, "n_batches": spec.n_batches,
                 "batch_size": spec.batch_size, "seed": seed, "train_kwargs": dict(spec.train_kwargs)},
                timeout=spec.timeout_s or timeout))

    order = list(codes)
    done: dict[str, dict[str, Trace]] = {}

    def finalize(code: str) -> None:
        r = results[code]
        if r.spec is not None:
            bad, good = r.traces["bad"], r.traces["good"]
            verdict, m, note = judge(r.spec, bad, good, device, env)
            r.runtime_verdict = verdict
            r.note = note
            if m is not None:
                r.observable = r.spec.observable or m.observable
                r.bad, r.good, r.ratio, r.values = m.bad, m.good, m.ratio, m.values
                r.evidence = r.spec.evidence_sentence(m)
            else:
                r.observable = r.spec.observable or "-"
                r.bad, r.good = bad.summary(), good.summary()
        r.verdict = r.runtime_verdict if r.lint_ok else LINT_MISMATCH
        if progress:
            i = order.index(code) + 1
            extra = f" ({r.note})" if r.note and r.verdict != CONFIRMED else ""
            lint = "" if r.lint_ok else f" [lint: {r.lint_detail}]"
            progress(f"[{i}/{len(order)}] {code} {r.name}: {r.verdict}{extra}{lint}")

    for code in codes:  # rules without a spec report at once
        if results[code].spec is None:
            finalize(code)

    def on_done(out: isolate.Outcome) -> None:
        code, kind = out.key
        if out.status == "ok":
            trace = Trace.from_dict(out.value)
        else:
            trace = Trace(status={"error": ERROR, "crashed": CRASHED, "timeout": TIMEOUT}[out.status], detail=out.detail)
        trace.wall_s = trace.wall_s or out.wall_s
        results[code].traces[kind] = trace
        done.setdefault(code, {})[kind] = trace
        if len(done[code]) == 2:
            finalize(code)

    isolate.run_jobs(job_list, parallel=jobs, on_done=on_done)
    ordered = [results[c] for c in codes]
    for r in ordered:
        if r.verdict in PASSING:
            r.evidence_line = evidence_line(r, device, env)
    return VerifyRun(device, env, seed, fixtures_dir, ordered, time.perf_counter() - t0)
