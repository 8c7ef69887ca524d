"""Outputs of `amplint verify`: terminal table, JSON, Markdown, PNG plots, the evidence file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .. import __version__
from .env import describe
from .trace import Trace, fmt, jsonable
from .signs import Evidence
from .verify import PASSING, RUN_NAMES, VERDICT_HELP, VerifyRun


def table_rows(run: VerifyRun) -> list[list[str]]:
    rows = [["rule", "verdict", "observable", "bad", "good", "ratio"]]
    for r in run.results:
        rows.append([f"{r.code} {r.name}", r.verdict, r.observable or "-", r.bad or "-", r.good or "-",
                     fmt(r.ratio) if r.ratio is not None else "-"])
    return rows


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def render_table(run: VerifyRun, max_cell: int = 44) -> str:
    rows = [[_clip(c, max_cell) for c in row] for row in table_rows(run)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for k, row in enumerate(rows):
        lines.append("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def summary_line(run: VerifyRun) -> str:
    counts = run.counts()
    parts = [f"{n} {v}" for v, n in sorted(counts.items(), key=lambda kv: (kv[0] not in PASSING, kv[0]))]
    status = "ok" if run.exit_code == 0 else "FAILED: " + ", ".join(r.code for r in run.results if not r.passed)
    return f"amplint verify: {len(run.results)} rules on {run.device} in {run.wall_s:.1f} s: {', '.join(parts) or 'nothing to run'} ({status})"


def _evidence_json(e: Evidence) -> dict[str, Any]:
    return {"sign": e.sign, "kind": e.kind, "shown": e.shown, "observable": e.observable, "bad": e.bad,
            "twin": e.twin, "ratio": e.ratio, "sentence": e.sentence, "values": e.values}


def _trace_json(t: Trace) -> dict[str, Any]:
    return {
        "status": t.status,
        "mode": t.mode,
        "summary": t.summary(),
        "exception": t.exception,
        "steps": t.n_steps,
        "skipped_steps": t.n_skipped,
        "found_inf_steps": t.n_found_inf,
        "mean_update_norm": t.mean_update,
        "mean_zero_grad_fraction": t.mean_zero_grad_fraction(),
        "first_nonfinite_step": t.first_nonfinite_step,
        "scalers": t.scalers,
        "scales": t.scales,
        "history": t.history,
        "update_norms": [s.update_norm for s in t.steps],
        "grad_norms": [s.grad_norm for s in t.steps],
        "skipped": [s.skipped for s in t.steps],
        "found_inf": [s.found_inf for s in t.steps],
        "lr": [s.lr for s in t.steps],
        "clips": t.clips,
        "scheduler_steps": t.sched,
        "autocast": t.autocast,
        "ops": t.ops,
        "emulation": t.emulation,
        "ranks": [_trace_json(r) for r in t.ranks],
        "warnings": t.warnings,
        "silenced": t.silenced,
        "detail": t.detail if t.status not in ("ok", "raised") else "",
        "wall_s": round(t.wall_s, 3),
    }


def to_json(run: VerifyRun) -> dict[str, Any]:
    return jsonable({
        "tool": "amplint verify",
        "version": __version__,
        "device": run.device,
        "environment": run.env,
        "seed": run.seed,
        "fixtures": str(run.fixtures_dir),
        "wall_s": round(run.wall_s, 2),
        "exit_code": run.exit_code,
        "counts": run.counts(),
        "rules": [
            {
                "code": r.code, "name": r.name, "verdict": r.verdict, "runtime_verdict": r.runtime_verdict,
                "passed": r.passed, "observable": r.observable, "bad": r.bad, "good": r.good, "ratio": r.ratio,
                "evidence": r.evidence, "evidence_line": r.evidence_line, "note": r.note,
                "signs": [_evidence_json(e) for e in r.signs],
                "lint": {"ok": r.lint_ok, "detail": r.lint_detail},
                "spec": None if r.spec is None else {
                    "optimizer": r.spec.optimizer, "lr": r.spec.lr, "n_batches": r.spec.n_batches,
                    "batch_size": r.spec.batch_size, "needs": r.spec.needs, "expect": r.spec.expect,
                    "world_size": r.spec.world_size, "train_kwargs": r.spec.train_kwargs,
                    "signs": [f"{s.name} ({s.kind})" for s in r.spec.signs]},
                "values": r.values,
                "traces": {k: _trace_json(t) for k, t in r.traces.items()},
            }
            for r in run.results
        ],
    })


def write_json(run: VerifyRun, path: Path) -> None:
    path.write_text(json.dumps(to_json(run), indent=2) + "\n", encoding="utf-8")


def _md(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _trace_md(label: str, t: Trace) -> list[str]:
    out = [f"- **{label}**: {t.summary()}"]
    if t.exception:
        e = t.exception
        out.append(f"  - exception: `{e['type']}: {_md(e['message'].splitlines()[0] if e['message'] else '')}`"
                   f" at fixture line {e.get('fixture_line')}, after {e.get('step_index')} completed step(s)")
    if t.steps:
        out.append(f"  - optimizer steps: {t.n_steps}, skipped by the scaler's inf check: {t.n_found_inf}, "
                   f"unchanged parameters: {sum(1 for s in t.steps if s.unchanged)}"
                   + (f", mean ‖Δθ‖ {fmt(t.mean_update)}" if t.executed else ""))
    if t.ranks:
        out.append(f"  - {len(t.ranks)} ranks: skipped " + " / ".join(f"{r.n_found_inf}/{r.n_steps}" for r in t.ranks))
    if t.emulation:
        out.append(f"  - emulation: {t.emulation}")
    if t.scalers:
        enabled = t.enabled_scalers()
        out.append(f"  - GradScalers built: {len(t.scalers)} ({enabled} enabled)"
                   + (f"; scale after the updates: {fmt(t.scales[0])} -> {fmt(t.scales[-1])} ({len(t.scales)} updates)"
                      if t.scales else "; no update() completed"))
    if t.clips:
        norms = [c["norm"] for c in t.clips if c.get("norm") is not None]
        out.append(f"  - clipping calls: {len(t.clips)}" + (f", first total norm {fmt(norms[0])}" if norms else ""))
    if t.sched:
        out.append(f"  - lr_scheduler steps: {len(t.sched)} ({sum(1 for s in t.sched if s['after_skip'])} right after "
                   "a skipped step)")
    extra = [k for k in t.history if k != "loss"] if isinstance(t.history, dict) else []
    for k in extra:
        s = t.series(k)
        if s:
            out.append(f"  - reported `{k}`: {fmt(s[0])} -> {fmt(s[-1])} ({len(s)} values)")
    ws = [w for w in t.warnings if w["category"] != "UserWarning" or "deterministic" not in w["message"]]
    for w in ws[:4]:
        first = w["message"].splitlines()[0] if w["message"] else ""
        out.append(f"  - {w['category']} x{w.get('count', 1)}: `{_md(first)[:160]}`")
    if t.status not in ("ok", "raised") and t.detail:
        out.append(f"  - detail: `{_md(t.detail.strip().splitlines()[-1])[:200]}`")
    return out


def render_markdown(run: VerifyRun, *, note: str = "") -> str:
    env = run.env
    lines = ["# amplint verify report", ""]
    lines.append(f"- amplint {__version__}; device **{run.device}**: {describe(env, run.device)}")
    fp16 = "available" if env.get("fp16_cpu_autocast") else "**missing** (fp16 rules cannot show on CPU)"
    lines.append(f"- float16 CPU autocast: {fp16}; CUDA available: {'yes' if env.get('cuda_available') else 'no'}")
    lines.append(f"- seed {run.seed}; fixtures: `{_rel(run.fixtures_dir)}`; {len(run.results)} rules; "
                 f"wall time {run.wall_s:.1f} s (runs only)")
    lines.append(f"- result: {summary_line(run).split(': ', 1)[1]}")
    if note:
        lines += ["", note]
    lines += ["", "| Rule | Verdict | Observable | bad.py | good.py | Ratio |", "|---|---|---|---|---|---|"]
    for r in run.results:
        lines.append(f"| {r.code} `{r.name}` | {r.verdict} | {_md(r.observable or '-')} | {_md(r.bad or '-')} | "
                     f"{_md(r.good or '-')} | {fmt(r.ratio) if r.ratio is not None else '-'} |")
    lines += ["", "Verdicts: " + "; ".join(f"**{v}**: {h}" for v, h in VERDICT_HELP.items()) + ".", ""]
    for r in run.results:
        lines += [f"## {r.code} `{r.name}`: {r.verdict}", ""]
        if r.evidence:
            lines += [r.evidence, ""]
        if r.note:
            lines += [f"Note: {r.note}", ""]
        lines.append(f"- lint pairing: {'ok' if r.lint_ok else 'MISMATCH'}: {r.lint_detail}")
        if r.spec is not None:
            s = r.spec
            kw = f", train kwargs {s.train_kwargs}" if s.train_kwargs else ""
            ranks = f", {s.world_size} gloo ranks" if s.world_size > 1 else ""
            lines.append(f"- problem: optimizer {s.optimizer}" + (f" (lr {s.lr})" if s.lr else "")
                         + f", {s.n_batches} batches of {s.batch_size}{kw}{ranks}")
        if r.signs:
            lines.append("- signs: " + "; ".join(f"{e.sign} ({e.kind}): {'**shown**' if e.shown else 'not shown'}"
                                                 for e in r.signs))
        for kind in ("bad", "good", "ref"):
            if kind in r.traces:
                lines += _trace_md(RUN_NAMES[kind], r.traces[kind])
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _rel(p: Path) -> str:
    try:
        return str(p.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(p)


# --- plots -----------------------------------------------------------------------------------


def have_matplotlib() -> bool:
    import importlib.util

    return importlib.util.find_spec("matplotlib") is not None


def write_plots(run: VerifyRun, out_dir: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    colors = {"bad": "#c0392b", "good": "#2471a3", "ref": "#7f8c8d"}
    styles = {"bad": "-", "good": "--", "ref": ":"}
    for r in run.results:
        if not r.traces:
            continue
        metrics = sorted({k for t in r.traces.values() if isinstance(t.history, dict)
                          for k in t.history if k != "loss" and t.series(k)})
        panels = 2 + (1 if metrics else 0)
        fig, axes = plt.subplots(1, panels, figsize=(4.2 * panels, 3.4))
        ax_loss, ax_scale = axes[0], axes[1]
        for kind, t in sorted(r.traces.items()):
            loss = t.loss
            if loss:
                ax_loss.plot(range(len(loss)), loss, label=RUN_NAMES[kind], color=colors[kind], ls=styles[kind], lw=1.2)
            if t.scales:
                ax_scale.step(range(1, len(t.scales) + 1), t.scales, where="post", label=RUN_NAMES[kind],
                              color=colors[kind], ls=styles[kind], lw=1.2)
            if metrics:
                for k in metrics:
                    s = t.series(k)
                    axes[2].plot(range(len(s)), s, marker="o", ms=3, color=colors[kind], ls=styles[kind],
                                 label=f"{RUN_NAMES[kind]} {k}", lw=1)
        _log_if_positive(ax_loss)
        for kind, t in sorted(r.traces.items()):
            if t.raised and t.exception:
                ax_loss.axvline(max(len(t.loss) - 1, 0), color=colors[kind], ls=":", lw=1,
                                label=f"{RUN_NAMES[kind]} raised {t.exception['type']}")
        ax_loss.set_title("training loss")
        ax_loss.set_xlabel("step")
        ax_scale.set_title("loss scale after update()")
        ax_scale.set_xlabel("update")
        if any(t.scales for t in r.traces.values()):
            ax_scale.set_yscale("log", base=2)
        else:
            ax_scale.text(0.5, 0.5, "no completed update()", ha="center", va="center", transform=ax_scale.transAxes)
        if metrics:
            _log_if_positive(axes[2])
            axes[2].set_title("reported metrics")
            axes[2].set_xlabel("evaluation")
        for ax in axes:
            if ax.get_legend_handles_labels()[0]:
                ax.legend(fontsize=7)
            ax.grid(alpha=0.3)
        fig.suptitle(f"{r.code} {r.name}: {r.verdict}", fontsize=10)
        fig.tight_layout()
        path = out_dir / f"{r.code}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    return written


def _log_if_positive(ax) -> None:
    import math

    ys = [float(y) for line in ax.get_lines() for y in line.get_ydata()]
    ys = [y for y in ys if math.isfinite(y)]
    if ys and min(ys) > 0 and max(ys) / min(ys) > 20:
        ax.set_yscale("log")


# --- the evidence file -----------------------------------------------------------------------


def update_evidence(run: VerifyRun, path: Path) -> list[str]:
    """Merge this run's evidence lines into ``path`` (``{"rules": {CODE: line}, "measured": {...}}``).

    Only passing verdicts are written. A line that did not see the failure (NEEDS CUDA on CPU,
    NEEDS CPU HOST on a CUDA machine) never replaces a CONFIRMED line measured on another
    device. Returns the codes written.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = {}
    rules = dict(data.get("rules", {}))
    measured = dict(data.get("measured", {}))
    written = []
    for r in run.results:
        if not r.passed or not r.evidence_line:
            continue
        old = measured.get(r.code, {})
        if r.verdict != "CONFIRMED" and old.get("verdict") == "CONFIRMED" and old.get("device") != run.device:
            continue  # keep the line of the device where the failure was seen
        rules[r.code] = r.evidence_line
        measured[r.code] = {"device": run.device, "verdict": r.verdict, "torch": run.env.get("torch"),
                            "seed": run.seed}
        written.append(r.code)
    out = {"rules": dict(sorted(rules.items())), "measured": dict(sorted(measured.items()))}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return written
