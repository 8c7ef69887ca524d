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
        click.echo(f"amplint: error: `amplint {command}` needs PyTorch, which is not installed in the environment "
                   f"that runs amplint ({sys.executable}).\n"
                   f"Install it there: {sys.executable} -m pip install torch  (any torch >= 2.3; the CPU build is "
                   "enough for --device cpu).\n"
                   "The `runtime` extra does the same: from an amplint checkout, pip install -e '.[runtime]'; "
                   "from a wheel, pip install 'amplint-<version>-py3-none-any.whl[runtime]'.", err=True)
        sys.exit(2)
    try:
        import torch  # noqa: F401
    except Exception as e:  # noqa: BLE001 - a broken install is a usage problem here
        click.echo(f"amplint: error: `amplint {command}` could not import torch: {type(e).__name__}: {e}", err=True)
        sys.exit(2)


def _checkout_root() -> Path | None:
    """The amplint source checkout this package runs from, or None (an installed package)."""
    pkg = Path(__file__).resolve().parents[1]
    root = pkg.parent
    if any(part in ("site-packages", "dist-packages") for part in pkg.parts):
        return None
    try:
        text = (root / "pyproject.toml").read_text(encoding="utf-8")
    except OSError:
        return None
    return root if 'name = "amplint"' in text else None


def _evidence_target(evidence_file: str | None) -> tuple[Path, bool]:
    """Where --update-evidence writes, and whether docs/rules is regenerated; exits 2 when the only
    default would be the installed package."""
    from .. import evidence

    if evidence_file:
        return Path(evidence_file), False
    if _checkout_root() is not None:
        return evidence.EVIDENCE_FILE, True
    click.echo(f"amplint: error: --update-evidence writes amplint/data/evidence.json in a source checkout, but this "
               f"amplint is installed ({Path(__file__).resolve().parents[1]}), and verify never writes into an "
               "installed package: pass --evidence-file PATH to write the evidence lines there", err=True)
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
@click.argument("script", required=False, type=click.Path(dir_okay=False, exists=True))
@click.option("--device", type=click.Choice(["auto", "cuda", "cpu"]), default="auto", show_default=True,
              help="Where to run (auto: CUDA when available).")
@click.option("--select", multiple=True, metavar="CODES",
              help="Rule codes or prefixes: the fixtures to verify, or the findings of SCRIPT to judge.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), help="Write the full results as JSON.")
@click.option("--report", "report_path", type=click.Path(dir_okay=False), help="Write a Markdown report.")
@click.option("--plots", "plots_dir", type=click.Path(file_okay=False),
              help="Write one PNG per rule (loss and scale, bad vs good) into this folder (needs matplotlib).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the model and the data.")
@click.option("--fixtures", "fixtures_dir", type=click.Path(file_okay=False, exists=True),
              help="The fixtures folder to run (default: the project's own fixtures).")
@click.option("--timeout", type=click.FloatRange(min=1), default=None,
              help="Seconds before a run is killed (default 60 for fixtures, 300 for SCRIPT).")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None,
              help="Runs at once (default: cores, at most 4).")
@click.option("--update-evidence", is_flag=True,
              help="Write each passing rule's evidence line to amplint/data/evidence.json (in a source checkout; "
                   "regenerates docs/rules) or to --evidence-file.")
@click.option("--evidence-file", type=click.Path(dir_okay=False),
              help="Where --update-evidence writes (required when amplint is installed, not a checkout).")
@click.option("--problem", metavar="MODULE:FUNCTION",
              help="SCRIPT only: the problem factory, make_problem(device, seed) -> {'model', 'optimizer', "
                   "'batches'} (default: make_problem in SCRIPT).")
@click.option("--entry", default="train", show_default=True, metavar="NAME",
              help="SCRIPT only: the training function, NAME(model, optimizer, batches, device) -> {'loss': [...]}.")
@click.option("--steps", type=click.IntRange(min=1), default=40, show_default=True,
              help="SCRIPT only: at most this many batches are handed to each run.")
@click.option("--min-drop", type=click.FloatRange(min=0, max=1, max_open=True), default=None,
              help="SCRIPT only: the fixed twin's loss must fall by this fraction of its first value (default 0.2).")
@click.option("-q", "--quiet", is_flag=True, help="No progress lines.")
def verify(script, device, select, json_path, report_path, plots_dir, seed, fixtures_dir, timeout, jobs,
           update_evidence, evidence_file, problem, entry, steps, min_drop, quiet) -> None:
    """Prove each rule's failure mode by running it: the fixtures, or SCRIPT (your training code).

    Without SCRIPT: runs fixtures/<CODE>/bad.py, good.py and good.py's FP32 reference for every
    rule and judges them. Exit status 0 when every rule reaches its expected verdict (CONFIRMED;
    MECHANISM ONLY or NO RUNTIME EFFECT where the rule's harm is not numerical; NEEDS ... where
    hardware is missing), 1 otherwise, 2 on usage errors or without torch.

    With SCRIPT (this executes it): lints SCRIPT, builds a fixed twin with amplint's own fixes,
    runs your train() on your make_problem(device, seed) and reports per finding whether its
    failure mode shows. Exit status 1 when one does (CONFIRMED, MECHANISM ONLY) or a finding could
    not be verified (GOOD FAILS, NO TWIN, ERROR), 0 when none showed, 2 on usage errors.
    """
    if script:
        for flag, value in (("--fixtures", fixtures_dir), ("--update-evidence", update_evidence),
                            ("--evidence-file", evidence_file), ("--plots", plots_dir)):
            if value:
                raise click.UsageError(f"{flag} applies to the fixtures, not to SCRIPT")
        _verify_script(Path(script), device, _codes(select) or None, json_path, report_path, seed, timeout or 300.0,
                       jobs, problem, entry, steps, min_drop, quiet)
        return
    for flag, value in (("--problem", problem), ("--min-drop", min_drop)):
        if value is not None:
            raise click.UsageError(f"{flag} applies to SCRIPT (amplint verify train.py)")
    from . import report
    from .verify import default_fixtures_dir, discover, run_verify, select_codes

    if plots_dir:
        _need_matplotlib()
    target = _evidence_target(evidence_file) if update_evidence else None
    if evidence_file and not update_evidence:
        raise click.UsageError("--evidence-file goes with --update-evidence")
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
                     timeout=timeout or 60.0, jobs=n_jobs, progress=emit)
    click.echo(report.render_table(run))
    click.echo(report.summary_line(run))
    if json_path:
        report.write_json(run, Path(json_path))
    if report_path:
        note = ""
        if dev == "cpu" and not info.get("cuda_available"):
            note = ("No GPU was available for this run: float16 numbers come from CPU autocast, whose op lists differ "
                    "from CUDA's; AMP103 is checked through CUDA autocast's kernels on CPU tensors and AMP902 on two "
                    "gloo ranks on CPU.")
        Path(report_path).write_text(report.render_markdown(run, note=note), encoding="utf-8")
    if plots_dir:
        written = report.write_plots(run, Path(plots_dir))
        emit(f"amplint verify: wrote {len(written)} plots to {plots_dir}")
    if target is not None:
        path, regen = target
        codes = report.update_evidence(run, path)
        emit(f"amplint verify: evidence lines for {len(codes)} rules written to {path}")
        if regen:
            from .. import docgen, evidence

            evidence._load.cache_clear()
            if docgen.DOCS.parent.is_dir():
                docgen.main([])
    sys.exit(run.exit_code)


def _verify_script(path: Path, device, select, json_path, report_path, seed, timeout, jobs, problem, entry, steps,
                   min_drop, quiet) -> None:
    from . import usercode

    emit = _progress(quiet)
    try:
        the_plan = usercode.plan(path, select)
    except usercode.UsageError as e:
        click.echo(f"amplint: error: {e}", err=True)
        sys.exit(2)
    except Exception as e:  # noqa: BLE001 - configuration errors and the like
        click.echo(f"amplint: error: {path}: {e}", err=True)
        sys.exit(2)
    if not the_plan.findings:
        click.echo(f"amplint verify: {path}: no findings, nothing to verify")
        sys.exit(0)
    if problem is None:
        import ast

        try:
            tree = ast.parse(the_plan.text)
        except SyntaxError:
            tree = None
        names = {n.name for n in getattr(tree, "body", []) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        if "make_problem" not in names:
            click.echo(f"amplint: error: {path} defines no make_problem(device, seed); define one that returns "
                       "{'model': ..., 'optimizer': ..., 'batches': [...]}, or pass --problem MODULE:FUNCTION",
                       err=True)
            sys.exit(2)
        if entry not in names:
            click.echo(f"amplint: error: {path} defines no {entry}(model, optimizer, batches, device) "
                       "(use --entry NAME)", err=True)
            sys.exit(2)
    _require_torch("verify")
    info = _probe_env()
    dev = _pick_device(device, info)
    n_jobs = jobs or max(1, min(4, os.cpu_count() or 1))
    run = usercode.run_user(path, device=dev, env=info, select=select, problem=problem, entry=entry, steps=steps,
                            seed=seed, timeout=timeout, jobs=n_jobs, min_drop=min_drop, progress=emit,
                            the_plan=the_plan)
    click.echo(usercode.render_table(run))
    click.echo(usercode.summary_line(run))
    if json_path:
        import json

        Path(json_path).write_text(json.dumps(usercode.to_json(run), indent=2) + "\n", encoding="utf-8")
    if report_path:
        Path(report_path).write_text(usercode.render_markdown(run), encoding="utf-8")
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
@click.option("--loss", "loss_name", default="auto", show_default=True, metavar="NAME|MODULE:FUNCTION",
              help="auto (cross-entropy for integer targets, else MSE), cross_entropy, mse, l1, bce_with_logits, "
                   "or fn(output, target) -> loss.")
@click.option("--optimizer", "optimizer_name", default="sgd", show_default=True, metavar="NAME|MODULE:FACTORY",
              help="sgd (momentum 0.9), adam, adamw, or factory(params) -> optimizer.")
@click.option("--lr", type=click.FloatRange(min=0, min_open=True), default=0.01, show_default=True)
@click.option("--output", "output_key", metavar="KEY",
              help="The prediction in a tuple or dict output (default: the tensor, 'logits', or item 0).")
@click.option("--loss-tolerance", type=click.FloatRange(min=0), default=0.05, show_default=True,
              help="An AMP mode whose loss differs from FP32's by more than this (relative, same step) is not "
                   "recommended.")
@click.option("--budget", type=click.FloatRange(min=0), default=120.0, show_default=True,
              help="Seconds of timed steps per mode before stopping early (at least 2 steps; 0: no limit).")
@click.option("--timeout", type=click.FloatRange(min=1), default=1800.0, show_default=True,
              help="Seconds before a mode's run is killed.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), help="Write the results as JSON.")
@click.option("--report", "report_path", type=click.Path(dir_okay=False), help="Write a Markdown report.")
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False),
              help="Write a PNG: images/s and peak memory per mode (needs matplotlib).")
@click.option("-q", "--quiet", is_flag=True, help="No progress lines.")
def bench(model, input_shape, input_factory, batch_size, steps, warmup, device, modes, num_classes, seed, loss_name,
          optimizer_name, lr, output_key, loss_tolerance, budget, timeout, json_path, report_path, plot_path,
          quiet) -> None:
    """Measure FP32 vs float16 (autocast + GradScaler) vs bfloat16 (autocast) training steps.

    Same seeded model, data, loss and optimizer in every mode; each mode runs in its own child
    process. Prints hardware facts, a table (with the coefficient of variation of the step
    times, the steady-state check) and a recommendation: only of a mode that ran, only against
    an FP32 baseline that ran, and only if its loss stays within --loss-tolerance of FP32's.
    """
    from . import bench as B

    if input_shape and input_factory:
        raise click.UsageError("--input-shape and --input are mutually exclusive")
    try:
        mode_list = B.parse_modes(modes)
        shape = B.parse_shape(input_shape) if input_shape else None
        loss_name = B.parse_choice_or_ref(loss_name, B.LOSSES, "--loss")
        optimizer_name = B.parse_choice_or_ref(optimizer_name, B.OPTIMIZERS, "--optimizer")
    except ValueError as e:
        raise click.UsageError(str(e)) from None
    if plot_path:
        _need_matplotlib()
    _require_torch("bench")
    from . import isolate

    cfg = B.BenchConfig(model=model, input_shape=shape, input_factory=input_factory, batch_size=batch_size,
                        steps=steps, warmup=warmup, modes=mode_list, seed=seed, num_classes=num_classes,
                        budget_s=budget or None, extra_sys_path=[os.getcwd()], loss=loss_name,
                        optimizer=optimizer_name, lr=lr, output=output_key, loss_tolerance=loss_tolerance)
    refs = [model, input_factory] + [r for r in (loss_name, optimizer_name) if ":" in r]
    for ref in filter(None, refs):
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
    emit(f"amplint bench: {cfg.model_name()}, batch {batch_size}, {warmup} warm-up + {steps} timed steps per mode, "
         f"{cfg.optimizer_text()}, loss {cfg.loss}")
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
            cv = f", CV {r['cv']:.0%}" if r.get("cv") is not None else ""
            emit(f"[{i}/{len(mode_list)}] {mode}: median {B._ms(r['median_s'])}/step over {r['steps_timed']} steps{cv}, "
                 f"{r['images_per_s']:.1f} images/s, final loss {r['final_loss']:.4g} ({out.wall_s:.1f} s)")
        else:
            emit(f"[{i}/{len(mode_list)}] {mode}: {r.get('status')}: {r.get('error')}")
    rec = B.recommend(results, hw, dev, loss_tolerance=loss_tolerance)
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
