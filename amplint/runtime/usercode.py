"""`amplint verify train.py`: does each finding's failure mode show in the user's own training step?

Explicit opt-in: this runs the user's code. The steps:

1. lint the file with amplint's public API (the user's configuration, ``--select``);
2. build the fixed twin with amplint's own fixes (safe and unsafe: the twin is never written
   back), and, for each rule code found, a variant with every other finding fixed and that one
   kept, so each code is judged on its own;
3. build the problem with the user's ``make_problem(device, seed)`` (in the file, or
   ``--problem MODULE:FUNCTION``), which returns ``{"model", "optimizer", "batches"}``; the
   harness hands at most ``--steps`` batches to ``train(model, optimizer, batches, device)``;
4. run the twin, its FP32 reference and each variant in forked children, recorded from outside;
5. judge each code with its rule's signs (the same model-independent predicates as the fixtures).

Nothing here imports torch at module level.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from .spec import CONFIRMED, MECHANISM_ONLY, NO_SPEC, NO_TWIN, RUN_ERROR
from .trace import AMP, FP32, Trace
from .verify import RuleResult, fill_result, outcome_trace

TWIN_NAME = "the fixed twin"


class UsageError(Exception):
    pass


@dataclass
class Plan:
    path: Path
    text: str
    good: str
    findings: dict[str, list[int]]  # code -> rows
    variants: dict[str, str]  # code -> text with that code's findings kept, every other fixed
    no_fix: dict[str, str]  # code -> why no twin
    remaining: list[str]  # codes amplint cannot fix, present in every run


@dataclass
class UserRun:
    path: Path
    device: str
    env: dict[str, Any]
    seed: int
    plan: Plan
    results: list[RuleResult]
    twin: dict[str, Trace] = field(default_factory=dict)
    steps: int | None = None
    problem: str = ""
    wall_s: float = 0.0

    @property
    def exit_code(self) -> int:
        """1 when a failure mode showed or something could not be verified, else 0."""
        bad = {CONFIRMED, MECHANISM_ONLY, RUN_ERROR, NO_SPEC, NO_TWIN, "GOOD FAILS"}
        return 1 if any(r.verdict in bad for r in self.results) else 0

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self.results:
            out[r.verdict] = out.get(r.verdict, 0) + 1
        return out


def _settings(path: Path, select: list[str] | None, ignore: list[str] | None = None):
    from ..config import CliOverrides, build_settings
    from ..rules import all_rules

    return build_settings([str(path)], CliOverrides(select=select, ignore=list(ignore or [])), all_rules())


def plan(path: Path, select: list[str] | None = None) -> Plan:
    """Lint ``path`` and build the twin and one variant per rule code (no torch, no execution)."""
    import amplint
    from ..fixer import fix_text

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"cannot read {path}: {e}") from None
    name = str(path)
    settings = _settings(path, select)
    diags = amplint.lint_source(text, name, settings=settings)
    if any(d.code == "AMP000" for d in diags):
        d = next(d for d in diags if d.code == "AMP000")
        raise UsageError(f"{path}:{d.location.row}:{d.location.column}: {d.message}")
    findings: dict[str, list[int]] = {}
    for d in diags:
        findings.setdefault(d.code, []).append(d.location.row)
    good = fix_text(text, name, settings=settings, unsafe=True)
    left = {d.code for d in amplint.lint_source(good, name, settings=settings)}
    variants, no_fix = {}, {}
    for code in findings:
        if code in left:
            no_fix[code] = f"amplint has no fix for {code} here, so there is no twin without it"
            continue
        # keep the findings that share a location with this code's, or that explain one another
        # (AMP015 and AMP201 on one scaled metric; AMP006 after AMP003's bypassing step): fixing
        # one of them removes the other
        mine = [d for d in diags if d.code == code]
        linked = {d.code for d in diags for m in mine if d.code != code and _linked(d, m)}
        variant = fix_text(text, name, settings=_settings(path, select, [code, *sorted(linked)]), unsafe=True)
        kept = {d.code for d in amplint.lint_source(variant, name, settings=settings)}
        if code not in kept:  # fixing another finding removed this one as well
            no_fix[code] = f"fixing the other findings also removes {code}: it cannot be judged on its own"
            continue
        variants[code] = variant
    return Plan(path, text, good, findings, variants, no_fix, sorted(left))


def _linked(a, b) -> bool:
    return (a.location == b.location or any(r.location == b.location for r in a.related)
            or any(r.location == a.location for r in b.related))


def original_line(variant: str, original: str, line: int) -> int:
    """The line of ``original`` that line ``line`` of ``variant`` comes from (a line a fix
    inserted maps to the original line before it)."""
    import difflib

    sm = difflib.SequenceMatcher(None, original.splitlines(), variant.splitlines(), autojunk=False)
    best = 1
    for tag, i1, i2, j1, j2 in sm.get_opcodes():
        if j1 < line <= j2 or (j1 == j2 and line == j1):
            if tag == "equal":
                return i1 + (line - j1)
            return max(1, i1 + min(line - j1, max(i2 - i1, 1)))
        if j2 < line:
            best = i2
    return max(1, best)


def run_user(path: Path, *, device: str, env: dict[str, Any], select: list[str] | None = None,
             problem: str | None = None, entry: str = "train", steps: int | None = 40, seed: int = 0,
             timeout: float = 120.0, jobs: int = 1, min_drop: float | None = None,
             progress: Callable[[str], None] | None = None, the_plan: Plan | None = None) -> UserRun:
    import torch

    from ..rules import rule_by_code
    from . import isolate
    from .instrument import run_loop
    from .specs import all_specs

    t0 = time.perf_counter()
    torch.use_deterministic_algorithms(True, warn_only=True)
    p = the_plan or plan(path, select)
    specs = all_specs()
    codes = sorted(p.findings)
    judged = [c for c in codes if c in p.variants and c in specs]
    opts = {"emulate_cuda_autocast": device == "cpu" and any(specs[c].emulate_cuda_autocast for c in judged),
            "record_ops": any(specs[c].record_ops for c in judged)}
    base = {"device": device, "problem": problem or "module", "steps": steps, "seed": seed, "entry": entry,
            "sys_path": [str(path.resolve().parent)], **opts}
    jobs_list = [isolate.Job(("twin", "good"), run_loop, (str(path),), {**base, "source": p.good, "mode": AMP},
                             timeout=timeout),
                 isolate.Job(("twin", "ref"), run_loop, (str(path),), {**base, "source": p.good, "mode": FP32},
                             timeout=timeout)]
    for c in judged:
        jobs_list.append(isolate.Job((c, "bad"), run_loop, (str(path),), {**base, "source": p.variants[c], "mode": AMP},
                                     timeout=timeout))
    if progress:
        progress(f"amplint verify: {path}: {len(codes)} rule code(s) found ({', '.join(codes) or 'none'}); "
                 f"{len(jobs_list)} runs of at most {steps or 'all'} batches")
    outs = isolate.run_jobs(jobs_list, parallel=jobs) if judged else {}
    traces = {k: outcome_trace(o) for k, o in outs.items()}
    for (c, kind), t in traces.items():  # exception lines of a variant, as lines of the user's file
        if t.exception and t.exception.get("fixture_line"):
            text = p.good if c == "twin" else p.variants[c]
            t.exception["fixture_line"] = original_line(text, p.text, t.exception["fixture_line"])
    twin = {"good": traces.get(("twin", "good")), "ref": traces.get(("twin", "ref"))}
    results = []
    for c in codes:
        rule = rule_by_code(c)
        r = RuleResult(c, rule.name if rule else "?", NO_SPEC, NO_SPEC)
        rows = p.findings[c]
        r.lint_detail = f"line{'s' if len(rows) > 1 else ''} {', '.join(map(str, rows))}"
        spec = specs.get(c)
        if c in p.no_fix:
            r.verdict = r.runtime_verdict = NO_TWIN
            r.note = p.no_fix[c]
        elif spec is None:
            r.note = f"no runtime spec for {c}"
        else:
            if min_drop is not None:
                spec = replace(spec, min_drop=min_drop)
            r.spec = spec
            r.traces = {"bad": traces[(c, "bad")], "good": twin["good"], "ref": twin["ref"]}
            fill_result(r, spec, r.traces, device, env, names=(path.name, TWIN_NAME))
            r.verdict = r.runtime_verdict
        r.passing = r.verdict not in (CONFIRMED, MECHANISM_ONLY)
        results.append(r)
        if progress:
            progress(f"  {c} {r.name} ({r.lint_detail}): {r.verdict}" + (f" ({r.note[:300]})" if r.note and r.verdict
                                                                         != CONFIRMED else ""))
    return UserRun(path, device, env, seed, p, results, twin, steps, problem or f"{path.name}:make_problem",
                   time.perf_counter() - t0)


# --- output ----------------------------------------------------------------------------------


def render_table(run: UserRun, max_cell: int = 44) -> str:
    from .report import _clip
    from .trace import fmt

    rows = [["finding", "verdict", "observable", run.path.name, "fixed twin", "ratio"]]
    for r in run.results:
        rows.append([f"{r.code} {r.name} ({r.lint_detail})", r.verdict, r.observable or "-", r.bad or "-",
                     r.good or "-", fmt(r.ratio) if r.ratio is not None else "-"])
    rows = [[c if i == 0 else _clip(c, max_cell) for i, c in enumerate(row)] for row in rows]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for k, row in enumerate(rows):
        lines.append("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def summary_line(run: UserRun) -> str:
    counts = ", ".join(f"{n} {v}" for v, n in sorted(run.counts().items())) or "no findings"
    g = run.twin.get("good")
    twin = f"; twin: {g.summary()}" if g is not None else ""
    return f"amplint verify: {run.path} on {run.device} in {run.wall_s:.1f} s: {counts}{twin}"


def to_json(run: UserRun) -> dict[str, Any]:
    from .. import __version__
    from .report import _evidence_json, _trace_json
    from .trace import jsonable

    return jsonable({
        "tool": "amplint verify", "version": __version__, "mode": "user-code", "file": str(run.path),
        "device": run.device, "environment": run.env, "seed": run.seed, "steps": run.steps, "problem": run.problem,
        "wall_s": round(run.wall_s, 2), "exit_code": run.exit_code, "counts": run.counts(),
        "unfixable": run.plan.remaining,
        "twin": {k: _trace_json(t) for k, t in run.twin.items() if t is not None},
        "findings": [
            {"code": r.code, "name": r.name, "lines": run.plan.findings.get(r.code, []), "verdict": r.verdict,
             "observable": r.observable, "bad": r.bad, "good": r.good, "ratio": r.ratio, "evidence": r.evidence,
             "note": r.note, "signs": [_evidence_json(e) for e in r.signs], "values": r.values,
             "trace": _trace_json(r.traces["bad"]) if "bad" in r.traces else None}
            for r in run.results
        ],
    })


def render_markdown(run: UserRun) -> str:
    from .env import describe
    from .report import _md
    from .trace import fmt

    lines = [f"# amplint verify: `{run.path.name}`", "",
             f"- device **{run.device}**: {describe(run.env, run.device)}",
             f"- problem: `{run.problem}`, seed {run.seed}, at most {run.steps or 'all'} batches per run",
             f"- result: {summary_line(run).split(': ', 2)[-1]}"]
    if run.plan.remaining:
        lines.append(f"- not fixable by amplint, so present in every run: {', '.join(run.plan.remaining)}")
    lines += ["", "| Finding | Verdict | Observable | yours | fixed twin | Ratio |", "|---|---|---|---|---|---|"]
    for r in run.results:
        lines.append(f"| {r.code} `{r.name}` ({r.lint_detail}) | {r.verdict} | {_md(r.observable or '-')} | "
                     f"{_md(r.bad or '-')} | {_md(r.good or '-')} | {fmt(r.ratio) if r.ratio is not None else '-'} |")
    lines.append("")
    for r in run.results:
        lines += [f"## {r.code} `{r.name}`: {r.verdict}", ""]
        if r.evidence:
            lines += [r.evidence, ""]
        if r.note:
            lines += [f"Note: {_md(r.note)}", ""]
    return "\n".join(lines).rstrip() + "\n"
