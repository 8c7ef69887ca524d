"""`--fix` through the worker pool: `-j 2` against `-j 1` on the corpus's AMP packages.

    python bench/fix_parallel.py [--corpus DIR] [--runs 2]

Copies the corpus's packages (all but torch and transformers, as the realworld tests choose
them) to two fresh temporary folders per run, runs `amplint --fix --no-cache --isolated -j N`
on each (alternating the order between runs), and compares the two trees byte for byte; then
times a plain check of the same tree with the same -j as the peer (the same pool: the fix ratio
should match the check ratio). Prints the wall times and the ratios; nothing here is a test.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SKIP = ("torch-", "transformers-")


def tree_digest(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default=os.environ.get("AMPLINT_CORPUS") or str(Path.home() / ".cache" / "amplint-corpus"))
    ap.add_argument("--runs", type=int, default=2)
    args = ap.parse_args()
    corpus = Path(args.corpus)
    packages = sorted(p for p in corpus.iterdir() if p.is_dir() and not p.name.startswith(SKIP + (".",)))
    if not packages:
        sys.exit(f"no corpus packages under {corpus}")
    times: dict[int, list[float]] = {1: [], 2: []}
    check_times: dict[int, list[float]] = {1: [], 2: []}
    fixed_files = 0
    for k in range(args.runs):
        digests = {}
        order = (1, 2) if k % 2 == 0 else (2, 1)
        for jobs in order:
            with tempfile.TemporaryDirectory() as tmp:
                dest = Path(tmp) / "amp"
                dest.mkdir()
                for p in packages:
                    shutil.copytree(p, dest / p.name, symlinks=True)
                before = tree_digest(dest)
                t0 = time.perf_counter()
                proc = subprocess.run([sys.executable, "-m", "amplint", "--fix", "--no-cache", "--isolated", "-q",
                                       "--exit-zero", "-j", str(jobs), "."], cwd=dest, capture_output=True, text=True)
                times[jobs].append(time.perf_counter() - t0)
                if proc.returncode not in (0, 1):
                    sys.exit(f"amplint failed ({proc.returncode}): {proc.stderr[-2000:]}")
                digests[jobs] = tree_digest(dest)
                t0 = time.perf_counter()  # the peer from the same run: a plain check, same pool
                subprocess.run([sys.executable, "-m", "amplint", "--no-cache", "--isolated", "-q", "--exit-zero",
                                "-j", str(jobs), "."], cwd=dest, capture_output=True)
                check_times[jobs].append(time.perf_counter() - t0)
                fixed_files = sum(1 for f, h in digests[jobs].items() if before.get(f) != h)
        same = digests[1] == digests[2]
        print(f"run {k + 1}: -j1 {times[1][-1]:.1f} s, -j2 {times[2][-1]:.1f} s, byte-identical: {same}, "
              f"files changed by the fixes: {fixed_files}")
        if not same:
            diff = [f for f in digests[1] if digests[1][f] != digests[2].get(f)]
            print("differ:", diff[:20])
            return 1
    n_files = sum(1 for p in packages for _ in p.rglob("*.py"))
    j1, j2 = statistics.median(times[1]), statistics.median(times[2])
    print(f"{len(packages)} packages, {n_files} Python files; median -j1 {j1:.1f} s, -j2 {j2:.1f} s; "
          f"ratio -j1/-j2 = {j1 / j2:.2f} (target >= 1.6)")
    c1, c2 = statistics.median(check_times[1]), statistics.median(check_times[2])
    print(f"peer, a plain check of the same tree: -j1 {c1:.1f} s, -j2 {c2:.1f} s, ratio {c1 / c2:.2f}; "
          f"load average now {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    sys.exit(main())
