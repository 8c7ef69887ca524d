"""Performance benchmark: amplint against ruff and TorchFix on the shared corpus, in one run.

    python bench/perf.py [--corpus DIR] [--runs 3] [--torchfix-sample 60] [--json FILE]

Builds (or reuses) the corpus of pinned PyPI releases with ../shared/tools/build-corpus.sh, then
times each command as a whole process, several runs each, alternating between the commands so
that a drift of the machine's speed hits them alike, and prints the medians with min-max:

- amplint cold (no cache, default jobs), amplint --jobs 1, amplint warm (every file a cache hit);
- ruff (`--select E9`, the cheapest full parse) without and with its cache;
- TorchFix on a deterministic sample of files (it is too slow for the whole corpus), and
  amplint on the same sample;
- the pre-commit shapes: one file without AMP tokens, one ~300-line AMP training script.

Ratios (amplint/ruff wall time, TorchFix/amplint time per line) are computed from medians of
the same run. Nothing here is a test: it prints numbers; docs/performance.md records them.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
BIN = Path(sys.executable).parent


def tool(name: str) -> str | None:
    p = BIN / name
    if p.exists():
        return str(p)
    return shutil.which(name)


def corpus_dir(arg: str | None) -> Path:
    dest = Path(arg or os.environ.get("AMPLINT_CORPUS") or Path.home() / ".cache" / "amplint-corpus")
    script = SHARED / "tools" / "build-corpus.sh"
    if not any(dest.glob("*-*")) and script.exists():
        subprocess.run(["bash", str(script), str(dest)], check=True)
    if not dest.exists():
        sys.exit(f"no corpus at {dest} and no {script} to build it")
    return dest


def count(corpus: Path) -> tuple[int, int, list[Path]]:
    files = sorted(p for p in corpus.rglob("*.py") if ".wheels" not in p.parts)
    lines = sum(p.read_bytes().count(b"\n") for p in files)
    return len(files), lines, files


# byte-compiled modules, as after a normal install (a shell that sets PYTHONDONTWRITEBYTECODE
# would make every run recompile amplint's modules)
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def measure(cmd: list[str], cwd: Path | None = None, env: dict | None = None) -> dict:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=cwd, env=env or ENV)
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    proc.returncode = os.waitstatus_to_exitcode(status)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    # ru_maxrss of the waited process is the largest single process of its tree that has ended
    return {"wall": wall, "cpu": cpu, "rss_mb": usage.ru_maxrss / 1024, "rc": proc.returncode}


def summarize(samples: list[dict]) -> dict:
    out = {}
    for key in ("wall", "cpu", "rss_mb"):
        vals = [s[key] for s in samples]
        out[key] = {"median": statistics.median(vals), "min": min(vals), "max": max(vals)}
    return out


def sample_files(files: list[Path], n: int) -> list[Path]:
    keyed = sorted(files, key=lambda p: hashlib.sha256(str(p.name).encode() + str(p.parent.name).encode()).hexdigest())
    return sorted(keyed[:n])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--torchfix-sample", type=int, default=60)
    ap.add_argument("--json")
    args = ap.parse_args()

    amplint = tool("amplint")
    ruff = tool("ruff")
    torchfix = tool("torchfix")
    if amplint is None:
        sys.exit("amplint is not installed in this environment")
    missing = [n for n, t in (("ruff", ruff), ("torchfix", torchfix)) if t is None]
    if missing:
        print(f"note: {', '.join(missing)} not installed (pip install ruff torchfix); those rows are skipped")

    corpus = corpus_dir(args.corpus)
    n_files, n_lines, files = count(corpus)
    print(f"corpus: {corpus} ({n_files} files, {n_lines} lines); machine: {os.cpu_count()} CPUs")

    work = Path(tempfile.mkdtemp(prefix="amplint-bench-"))
    cache = work / "amplint-cache"
    ruff_cache = work / "ruff-cache"
    sample = sample_files(files, args.torchfix_sample)
    sample_dir = work / "sample"
    sample_dir.mkdir()
    for i, p in enumerate(sample):
        shutil.copy(p, sample_dir / f"{i:04d}_{p.name}")
    sample_lines = sum(p.read_bytes().count(b"\n") for p in sample)
    no_amp = ROOT / "amplint" / "diagnostics.py"
    script = work / "train_script.py"
    script.write_text(_training_script())

    base = [amplint, "--isolated", "--exit-zero", "-q"]
    commands = {
        "amplint cold": base + ["--no-cache", str(corpus)],
        "amplint --jobs 1": base + ["--no-cache", "--jobs", "1", str(corpus)],
        "amplint warm": base + ["--cache-dir", str(cache), str(corpus)],
        "amplint sample": base + ["--no-cache", "--jobs", "1", str(sample_dir)],
        "amplint one file, no AMP": base + ["--no-cache", str(no_amp)],
        "amplint one training script": base + ["--no-cache", str(script)],
    }
    if ruff:
        commands["ruff cold"] = [ruff, "check", "--isolated", "--select", "E9", "--no-cache", "--exit-zero", "-q", str(corpus)]
        commands["ruff warm"] = [ruff, "check", "--isolated", "--select", "E9", "--cache-dir", str(ruff_cache), "--exit-zero", "-q",
                                 str(corpus)]
    if torchfix:
        commands["torchfix sample"] = [torchfix, "--jobs", "1", str(sample_dir)]

    # prime the caches (not counted)
    measure(commands["amplint warm"])
    if ruff:
        measure(commands["ruff warm"])
    results: dict[str, list[dict]] = {k: [] for k in commands}
    for r in range(args.runs):
        for name, cmd in commands.items():
            if name == "torchfix sample" and r > 0:
                continue  # slow: once is enough
            results[name].append(measure(cmd))
            print(f"  run {r + 1}/{args.runs} {name}: {results[name][-1]['wall']:.2f} s", file=sys.stderr)

    summary = {k: summarize(v) for k, v in results.items() if v}
    print()
    print(f"{'command':<30} {'wall s (min-max)':>22} {'cpu s':>8} {'peak RSS MB':>12} {'files/s':>9} {'lines/s':>10}")
    for name, s in summary.items():
        w = s["wall"]
        nf, nl = (n_files, n_lines) if "sample" not in name and "one" not in name else (
            (len(sample), sample_lines) if "sample" in name else (1, 0))
        fps = f"{nf / w['median']:.0f}" if nl else "-"
        lps = f"{nl / w['median']:.0f}" if nl else "-"
        print(f"{name:<30} {w['median']:>8.2f} ({w['min']:.2f}-{w['max']:.2f}) {s['cpu']['median']:>8.2f} "
              f"{s['rss_mb']['median']:>12.0f} {fps:>9} {lps:>10}")
    ratios = {}
    if ruff:
        ratios["amplint cold / ruff cold (wall)"] = summary["amplint cold"]["wall"]["median"] / summary["ruff cold"]["wall"]["median"]
        ratios["amplint warm / ruff warm (wall)"] = summary["amplint warm"]["wall"]["median"] / summary["ruff warm"]["wall"]["median"]
    if torchfix:
        tf_lps = sample_lines / summary["torchfix sample"]["wall"]["median"]
        am_lps = n_lines / summary["amplint cold"]["wall"]["median"]
        am_sample_lps = sample_lines / summary["amplint sample"]["wall"]["median"]
        ratios["amplint (corpus) / TorchFix (sample), lines per second"] = am_lps / tf_lps
        ratios["amplint / TorchFix on the same sample, lines per second"] = am_sample_lps / tf_lps
    print()
    for k, v in ratios.items():
        print(f"{k}: {v:.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps({"corpus": {"files": n_files, "lines": n_lines}, "summary": summary,
                                               "ratios": ratios}, indent=2))
    shutil.rmtree(work, ignore_errors=True)
    return 0


def _training_script() -> str:
    """A ~300-line AMP training script (the pre-commit shape): the fixtures, concatenated."""
    parts = []
    for p in sorted((ROOT / "fixtures").glob("AMP00*/good.py"))[:8]:
        text = p.read_text()
        text = text.replace("def train(", f"def train_{p.parent.name.lower()}(")
        parts.append(text.split('if __name__ == "__main__":')[0])
    return "\n\n".join(parts)


if __name__ == "__main__":
    sys.exit(main())
