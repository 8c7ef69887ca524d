"""The `amplint verify` and `amplint bench` commands.

torch is imported inside the command bodies only: importing this module (which ``amplint.cli``
does to register the commands) must stay free of torch.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import click

CONTEXT = {"help_option_names": ["-h", "--help"]}


def _codes(values: tuple[str, ...]) -> list[str]:
    out: list[str] = []
    for v in values:
        out.extend(x.strip() for x in v.split(",") if x.strip())
    return out


def _require_torch(command: str) -> None:
    """Import torch (once, in this process) or exit 2 with a clear message."""
    if importlib.util.find_spec("torch") is None:
        click.echo(f"amplint: error: `amplint {command}` needs PyTorch, which is not installed.\n"
                   "Install the runtime extra: pip install 'amplint[runtime]' (or any torch >= 2.3).", err=True)
        sys.exit(2)
    try:
        import torch  # noqa: F401
    except Exception as e:  # noqa: BLE001 - a broken install is a usage problem here
        click.echo(f"amplint: error: `amplint {command}` could not import torch: {type(e).__name__}: {e}", err=True)
        sys.exit(2)


def _probe_env(timeout: float = 120.0) -> dict:
    from . import env, isolate

    out = isolate.run_one(env.probe, timeout=timeout)
    if out.status != "ok":
        click.echo(f"amplint: error: probing the device failed ({out.status}): {out.detail.strip()[-500:]}", err=True)
        sys.exit(2)
    return out.value


def _pick_device(requested: str, info: dict) -> str:
    if requested == "auto":
        return "cuda" if info.get("cuda_available") else "cpu"
    if requested == "cuda" and not info.get("cuda_available"):
        click.echo("amplint: error: --device cuda, but torch sees no CUDA device "
                   f"(torch {info.get('torch')}, built with CUDA {info.get('cuda_version')})", err=True)
        sys.exit(2)
    return requested


def _need_matplotlib() -> None:
    if importlib.util.find_spec("matplotlib") is None:
        click.echo("amplint: error: plots need matplotlib: pip install 'amplint[plots]'", err=True)
        sys.exit(2)


def _progress(quiet: bool):
    def emit(line: str) -> None:
        if not quiet:
            click.echo(line, err=True)

    return emit


# --- verify ----------------------------------------------------------------------------------


@click.command("verify", context_settings=CONTEXT)
@click.option("--device", type=click.Choice(["auto", "cuda", "cpu"]), default="auto", show_default=True,
              help="Where to run the fixtures (auto: CUDA when available).")
@click.option("--select", multiple=True, metavar="CODES", help="Rule codes or prefixes to verify (default: all).")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), help="Write the full results as JSON.")
@click.option("--report", "report_path", type=click.Path(dir_okay=False), help="Write a Markdown report.")
@click.option("--plots", "plots_dir", type=click.Path(file_okay=False),
              help="Write one PNG per rule (loss and scale, bad vs good) into this folder (needs matplotlib).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the model and the data.")
@click.option("--fixtures", "fixtures_dir", type=click.Path(file_okay=False, exists=True),
              help="The fixtures folder to run (default: the project's own fixtures/).")
@click.option("--timeout", type=click.FloatRange(min=1), default=60.0, show_default=True,
              help="Seconds before a fixture run is killed.")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None,
              help="Fixture runs at once (default: cores, at most 4).")
@click.option("--update-evidence", is_flag=True,
              help="Write each passing rule's evidence line to amplint/data/evidence.json (and regenerate docs/rules).")
@click.option("-q", "--quiet", is_flag=True, help="No progress lines.")
def verify(device, select, json_path, report_path, plots_dir, seed, fixtures_dir, timeout, jobs, update_evidence,
           quiet) -> None:
    """Prove each rule's failure mode: run fixtures/<CODE>/bad.py and good.py and compare.

    Exit status: 0 when every rule is CONFIRMED, NEEDS CUDA (on CPU), NEEDS CPU HOST (on a
    CUDA machine), NEEDS DISTRIBUTED or NO RUNTIME EFFECT; 1 otherwise (NOT REPRODUCED,
    GOOD FAILS, LINT MISMATCH, NO SPEC, ERROR); 2 on usage errors or without torch.
    """
    from . import report
    from .verify import default_fixtures_dir, discover, run_verify, select_codes

    if plots_dir:
        _need_matplotlib()

    fixtures = Path(fixtures_dir) if fixtures_dir else default_fixtures_dir()
    found = discover(fixtures)
    if not found:
        click.echo(f"amplint: error: no fixture pairs (<CODE>/bad.py, good.py) under {fixtures}", err=True)
        sys.exit(2)
    if not select_codes(list(found), _codes(select) or None):
        click.echo(f"amplint: error: no fixture pair matches --select {','.join(_codes(select))}", err=True)
        sys.exit(2)
    _require_torch("verify")
    info = _probe_env()
    dev = _pick_device(device, info)
    emit = _progress(quiet)
    if dev == "cpu" and not info.get("fp16_cpu_autocast"):
        emit(f"amplint verify: torch {info.get('torch')} has no float16 CPU autocast; "
             "rules that need it are reported as NEEDS CUDA")
    emit(f"amplint verify: {'CUDA ' + str(info.get('device_name')) if dev == 'cuda' else 'CPU'}, "
         f"torch {info.get('torch')}, fixtures {fixtures}")
    n_jobs = jobs or max(1, min(4, os.cpu_count() or 1))
    run = run_verify(device=dev, env=info, fixtures_dir=fixtures, select=_codes(select) or None, seed=seed,
                     timeout=timeout, jobs=n_jobs, progress=emit)
    click.echo(report.render_table(run))
    click.echo(report.summary_line(run))
    if json_path:
        report.write_json(run, Path(json_path))
    if report_path:
        note = ""
        if dev == "cpu" and not info.get("cuda_available"):
            note = ("No GPU was available for this run. Rules whose failure exists only on CUDA are NEEDS CUDA, "
                    "and the float16 numbers come from CPU autocast, whose op lists differ from CUDA's.")
        Path(report_path).write_text(report.render_markdown(run, note=note), encoding="utf-8")
    if plots_dir:
        written = report.write_plots(run, Path(plots_dir))
        emit(f"amplint verify: wrote {len(written)} plots to {plots_dir}")
    if update_evidence:
        from .. import docgen, evidence

        codes = report.update_evidence(run, evidence.EVIDENCE_FILE)
        evidence._load.cache_clear()
        emit(f"amplint verify: evidence lines for {len(codes)} rules written to {evidence.EVIDENCE_FILE}")
        if docgen.DOCS.parent.is_dir():
            docgen.main([])
    sys.exit(run.exit_code)


# --- bench -----------------------------------------------------------------------------------


@click.command("bench", context_settings=CONTEXT)
@click.option("--model", metavar="MODULE:FACTORY",
              help="Model factory, e.g. mypkg.models:build or path/to/file.py:build (default: a built-in ResNet-18).")
@click.option("--input-shape", metavar="C,H,W", help="Per-sample input shape of synthetic inputs (default 3,224,224).")
@click.option("--input", "input_factory", metavar="MODULE:FACTORY",
              help="Batch factory: factory(batch_size) -> inputs or (inputs, targets).")
@click.option("--batch-size", type=click.IntRange(min=1), default=32, show_default=True)
@click.option("--steps", type=click.IntRange(min=1), default=20, show_default=True, help="Timed steps per mode.")
@click.option("--warmup", type=click.IntRange(min=0), default=5, show_default=True, help="Untimed steps first.")
@click.option("--device", type=click.Choice(["auto", "cuda", "cpu"]), default="auto", show_default=True)
@click.option("--modes", default="fp32,fp16,bf16", show_default=True, help="Comma-separated subset of fp32,fp16,bf16.")
@click.option("--num-classes", type=click.IntRange(min=2), default=1000, show_default=True,
              help="Classes of the built-in ResNet-18.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--budget", type=click.FloatRange(min=0), default=120.0, show_default=True,
              help="Seconds of timed steps per mode before stopping early (at least 2 steps; 0: no limit).")
@click.option("--timeout", type=click.FloatRange(min=1), default=1800.0, show_default=True,
              help="Seconds before a mode's run is killed.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), help="Write the results as JSON.")
@click.option("--report", "report_path", type=click.Path(dir_okay=False), help="Write a Markdown report.")
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False),
              help="Write a PNG: images/s and peak memory per mode (needs matplotlib).")
@click.option("-q", "--quiet", is_flag=True, help="No progress lines.")
def bench(model, input_shape, input_factory, batch_size, steps, warmup, device, modes, num_classes, seed, budget,
          timeout, json_path, report_path, plot_path, quiet) -> None:
    """Measure FP32 vs float16 (autocast + GradScaler) vs bfloat16 (autocast) training steps.

    Same seeded model, data and SGD-with-momentum optimizer in every mode; each mode runs in
    its own child process. Prints hardware facts, a table and a recommendation.
    """
    from . import bench as B

    if input_shape and input_factory:
        raise click.UsageError("--input-shape and --input are mutually exclusive")
    try:
        mode_list = B.parse_modes(modes)
        shape = B.parse_shape(input_shape) if input_shape else None
    except ValueError as e:
        raise click.UsageError(str(e)) from None
    if plot_path:
        _need_matplotlib()
    _require_torch("bench")
    from . import isolate

    cfg = B.BenchConfig(model=model, input_shape=shape, input_factory=input_factory, batch_size=batch_size,
                        steps=steps, warmup=warmup, modes=mode_list, seed=seed, num_classes=num_classes,
                        budget_s=budget or None, extra_sys_path=[os.getcwd()])
    for ref in filter(None, (model, input_factory)):
        # loaded in a child: user code may touch CUDA at import, which the parent must not
        out = isolate.run_one(B.check_reference, ref, cfg.extra_sys_path, timeout=300)
        if out.status != "ok":
            last = out.detail.strip().splitlines()[-1] if out.detail.strip() else out.status
            click.echo(f"amplint: error: cannot load {ref}: {last}", err=True)
            sys.exit(2)
    hw = _probe_env()
    dev = _pick_device(device, hw)
    emit = _progress(quiet)
    for line in B.hardware_lines(hw, dev):
        emit(f"amplint bench: {line}")
    emit(f"amplint bench: {cfg.model_name()}, batch {batch_size}, {warmup} warm-up + {steps} timed steps per mode")
    results: dict = {}
    for i, mode in enumerate(mode_list, 1):
        emit(f"[{i}/{len(mode_list)}] {mode}: running...")
        out = isolate.run_one(B.run_mode, cfg, mode, dev, timeout=timeout)
        if out.status == "ok":
            r = out.value
        else:
            r = {"mode": mode, "status": out.status, "error": out.detail.strip().splitlines()[-1] if out.detail.strip() else out.status}
        results[mode] = r
        if r.get("status") == "ok":
            emit(f"[{i}/{len(mode_list)}] {mode}: median {B._ms(r['median_s'])}/step over {r['steps_timed']} steps, "
                 f"{r['images_per_s']:.1f} images/s, final loss {r['final_loss']:.4g} ({out.wall_s:.1f} s)")
        else:
            emit(f"[{i}/{len(mode_list)}] {mode}: {r.get('status')}: {r.get('error')}")
    rec = B.recommend(results, hw, dev)
    click.echo(B.render_table(results))
    click.echo("")
    click.echo(f"Recommendation: {rec['text']}")
    for f in rec["flags"]:
        click.echo(f"  note: {f}")
    if json_path:
        import json

        Path(json_path).write_text(json.dumps(B.to_json(cfg, dev, hw, results, rec), indent=2) + "\n", encoding="utf-8")
    if report_path:
        Path(report_path).write_text(B.render_markdown(cfg, dev, hw, results, rec), encoding="utf-8")
    if plot_path:
        B.write_plot(results, Path(plot_path), f"amplint bench: {cfg.model_name()} on {dev}, batch {batch_size}")
    sys.exit(0 if any(r.get("status") == "ok" for r in results.values()) else 1)
