"""`amplint verify`: run each rule's fixture pair and its FP32 reference, judge, check the linter agrees.

Flow: discover ``fixtures/<CODE>/{bad,good}.py`` -> lint both in-process (the pairing check) ->
probe the device in a child -> fork one child per run (torch was imported once, by the parent,
which never runs a kernel or touches CUDA): ``bad.py``, ``good.py`` and ``good.py`` as the FP32
reference (autocast and GradScalers disabled); a rule whose failure needs several processes runs
each of them on gloo ranks -> each rule's spec judges the three traces -> a verdict.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .signs import Evidence
from .spec import (
    CONFIRMED,
    GOOD_FAILS,
    LINT_MISMATCH,
    MECHANISM_ONLY,
    NEEDS,
    NEEDS_CPU_HOST,
    NEEDS_CUDA,
    NEEDS_DISTRIBUTED,
    NO_RUNTIME_EFFECT,
    NO_SPEC,
    NO_TWIN,
    NOT_REPRODUCED,
    RUN_ERROR,
    VERDICT_HELP,
    Spec,
    evidence_sentence,
    judge,
    passes,
)
from .trace import AMP, CRASHED, ERROR, FP32, TIMEOUT, Trace

__all__ = [
    "CONFIRMED", "GOOD_FAILS", "LINT_MISMATCH", "MECHANISM_ONLY", "NEEDS_CPU_HOST", "NEEDS_CUDA", "NEEDS_DISTRIBUTED",
    "NO_RUNTIME_EFFECT", "NO_SPEC", "NO_TWIN", "NOT_REPRODUCED", "RUN_ERROR", "VERDICT_HELP", "RuleResult", "VerifyRun",
    "default_fixtures_dir", "discover", "select_codes", "pairing_check", "run_verify", "judge",
]

# verdicts that can pass (whether one does depends on the rule's spec: see spec.passes)
PASSING = (CONFIRMED, MECHANISM_ONLY, NEEDS_CUDA, NEEDS_CPU_HOST, NEEDS_DISTRIBUTED, NO_RUNTIME_EFFECT)

_CODE_DIR = re.compile(r"^AMP\d{3}$")
RUN_NAMES = {"bad": "bad.py", "good": "good.py", "ref": "good.py (FP32 reference)"}


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
    signs: list[Evidence] = field(default_factory=list)
    passing: bool | None = None

    @property
    def passed(self) -> bool:
        if self.passing is not None:
            return self.passing
        return self.verdict in (CONFIRMED, *NEEDS)


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


def packaged_fixtures_dir() -> Path:
    """The fixtures installed with the package (wheel package data: ``amplint/fixtures``)."""
    return Path(__file__).resolve().parents[1] / "fixtures"


def default_fixtures_dir() -> Path:
    """The project's own fixtures: the checkout's ``fixtures/`` next to the package, else the copy
    installed with the package.

    Never the current directory: ``verify`` executes the fixtures it finds, so it runs only the
    project's, or a folder the user names with ``--fixtures``."""
    pkg = Path(__file__).resolve().parents[1]
    checkout = pkg.parent / "fixtures"
    if (pkg.parent / "pyproject.toml").is_file() and discover(checkout):
        return checkout
    return packaged_fixtures_dir()


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


# --- the verdict of one rule ------------------------------------------------------------------


def fill_result(r: RuleResult, spec: Spec, traces: dict[str, Trace], device: str, env: dict[str, Any],
                names: tuple[str, str] = ("bad.py", "good.py")) -> None:
    """Judge the three runs of ``r`` and fill in its verdict, numbers and evidence."""
    bad, good, ref = traces.get("bad"), traces.get("good"), traces.get("ref")
    j = judge(spec, bad, good, ref, device, env, names)
    r.runtime_verdict = j.verdict
    r.signs = j.evidence
    r.values = j.values()
    lead = j.lead
    if lead is not None and j.verdict not in (RUN_ERROR, GOOD_FAILS):
        r.observable, r.bad, r.good, r.ratio = lead.observable, lead.bad, lead.twin, lead.ratio
    else:
        r.observable = lead.observable if lead is not None else "-"
        r.bad = bad.summary() if bad else "-"
        r.good = good.summary() if good else "-"
    r.note = j.note or spec.note
    if j.verdict in (CONFIRMED, MECHANISM_ONLY, NO_RUNTIME_EFFECT, *NEEDS):
        r.evidence = evidence_sentence(spec, j, names)


def evidence_line(r: RuleResult, device: str, env: dict[str, Any]) -> str:
    where = "CUDA" if device == "cuda" else "CPU"
    ctx = f"`amplint verify` on {where}, torch {env.get('torch')}"
    if device == "cuda" and env.get("device_name"):
        ctx += f", {env['device_name']}"
    if r.verdict == CONFIRMED:
        return f"Confirmed ({ctx}): {r.evidence}"
    if r.verdict == MECHANISM_ONLY:
        return f"Mechanism measured, no numerical harm at this size ({ctx}): {r.evidence}"
    if r.verdict == NEEDS_CUDA:
        return f"Needs CUDA to reproduce ({ctx}): {r.note}"
    if r.verdict == NEEDS_CPU_HOST:
        return f"Shows only on a host without CUDA; not reproduced here ({ctx}): {r.note}"
    if r.verdict == NEEDS_DISTRIBUTED:
        return f"Needs a multi-process launch to reproduce ({ctx}): {r.note}"
    if r.verdict == NO_RUNTIME_EFFECT:
        return f"No runtime effect, measured ({ctx}): {r.evidence}"
    return ""


# --- the run ---------------------------------------------------------------------------------


def run_jobs_for(code: str, spec: Spec, files: dict[str, Path], device: str, seed: int, timeout: float,
                 extra: dict[str, Any] | None = None) -> list:
    """The isolate jobs of one rule: keys ``(code, "bad" | "good" | "ref")``."""
    from . import isolate
    from .instrument import run_loop, run_ranks

    jobs = []
    for kind, path, mode in (("bad", files["bad"], AMP), ("good", files["good"], AMP), ("ref", files["good"], FP32)):
        kw = {"device": device, "mode": mode, "optimizer": spec.optimizer, "lr": spec.lr, "n_batches": spec.n_batches,
              "batch_size": spec.batch_size, "seed": seed, "train_kwargs": dict(spec.train_kwargs),
              **spec.run_options(), **(extra or {})}
        if spec.world_size > 1:
            limit = spec.timeout_s or timeout
            jobs.append(isolate.Job((code, kind), run_ranks, (str(path),),
                                    {"world_size": spec.world_size, "timeout": limit, **kw}, timeout=limit + 30))
        else:
            jobs.append(isolate.Job((code, kind), run_loop, (str(path),), kw, timeout=spec.timeout_s or timeout))
    return jobs


def outcome_trace(out) -> Trace:
    if out.status == "ok":
        trace = Trace.from_dict(out.value)
    else:
        trace = Trace(status={"error": ERROR, "crashed": CRASHED, "timeout": TIMEOUT}[out.status], detail=out.detail)
    trace.wall_s = trace.wall_s or out.wall_s
    return trace


def run_verify(*, device: str, env: dict[str, Any], fixtures_dir: Path, select: list[str] | None, seed: int = 0,
               timeout: float = 60.0, jobs: int = 1, progress: Callable[[str], None] | None = None) -> VerifyRun:
    import torch

    from ..rules import rule_by_code
    from . import isolate
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
            r.passing = False
            continue
        files = {"bad": found[code] / "bad.py", "good": found[code] / "good.py"}
        job_list += run_jobs_for(code, spec, files, device, seed, timeout)

    order = list(codes)
    done: dict[str, dict[str, Trace]] = {}

    def finalize(code: str) -> None:
        r = results[code]
        if r.spec is not None:
            fill_result(r, r.spec, r.traces, device, env)
        r.verdict = r.runtime_verdict if r.lint_ok else LINT_MISMATCH
        r.passing = r.lint_ok and passes(r.spec, r.runtime_verdict)
        if progress:
            i = order.index(code) + 1
            extra = f" ({r.note})" if r.note and r.verdict not in (CONFIRMED,) else ""
            lint = "" if r.lint_ok else f" [lint: {r.lint_detail}]"
            progress(f"[{i}/{len(order)}] {code} {r.name}: {r.verdict}{extra[:400]}{lint}")

    for code in codes:  # rules without a spec report at once
        if results[code].spec is None:
            finalize(code)

    def on_done(out: isolate.Outcome) -> None:
        code, kind = out.key
        trace = outcome_trace(out)
        results[code].traces[kind] = trace
        done.setdefault(code, {})[kind] = trace
        if len(done[code]) == 3:
            finalize(code)

    # the multi-process rules first: they are the longest
    job_list.sort(key=lambda j: 0 if j.fn.__name__ == "run_ranks" else 1)
    isolate.run_jobs(job_list, parallel=jobs, on_done=on_done)
    ordered = [results[c] for c in codes]
    for r in ordered:
        if r.passed:
            r.evidence_line = evidence_line(r, device, env)
    return VerifyRun(device, env, seed, fixtures_dir, ordered, time.perf_counter() - t0)
