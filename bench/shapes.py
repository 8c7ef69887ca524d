"""Resource shapes (issue 19): time and peak memory of one amplint run against input size.

    python bench/shapes.py [--shape NAME ...] [--runs 1] [--check]

Each shape is a family of generated inputs at 1x, 2x and 4x, and one more near the node limit
below (the costliest input of that shape that is still analysed) or past the protocol-call
bound; each input is linted by a fresh ``amplint --no-cache --isolated`` process whose wall time
and peak RSS (``wait4``) are printed, with the time ratio against the shape's 1x input of the
same run. Shapes:

- ``unscale_calls``: one step function with N optimizers: N ``scaler.unscale_`` calls, N clips,
  N ``scaler.step`` calls;
- ``branches``: one function with N ``if`` branches each holding a protocol call;
- ``step_branches``: one loop with N ``if/elif/else`` groups, a ``step``, an ``update`` and an
  ``unscale_`` in each (3^N paths; the states kept per point shrink past 128 calls, and a function
  of over 1,000 calls is given up with a warning);
- ``scalers``: N GradScalers built at module level (each a scaler of every later path);
- ``functions``: N training functions in one file (the per-file flow budget);
- ``cells``: a notebook of N cells, every tenth one a step without update (findings in many cells);
- ``literal``: a constant table of N numbers on one line; ``literal_rows``: a dict literal of N
  rows (both up to about max-file-size);
- ``oversize``: a .py and a .ipynb of N MB (sparse), over max-file-size: never read;
- ``dense_code``: real code (the corpus, if present) of N KB with an AMP loop (LibCST's cost);
- ``dict_calls``: a dict of N ``"k": scaler.scale(i)`` entries (the most nodes per byte);
- ``scaled_names``: N names bound to ``scaler.scale(...)`` in one path (each used to copy the set).

A file with more syntax nodes than ``max-file-size`` allows (one per 52 bytes) is not analysed,
with a warning: the ``analysed`` column says which inputs were.

``--check`` exits 1 unless every input under max-file-size finishes in under 5 s and 500 MB and
4x the protocol calls (``unscale_calls``, ``step_branches``) costs at most 5x the time of 1x. Numbers, not tests: see docs/performance.md.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_FILE_SIZE = 2 * 1024 * 1024
HEADER = "import torch\n\n"


def unscale_calls(n: int) -> tuple[str, str]:
    opts = ", ".join(f"o{i}" for i in range(n))
    body = [f"def step({opts}, model, loader):", "    scaler = torch.amp.GradScaler('cuda')", "    for x, y in loader:",
            "        with torch.autocast('cuda', dtype=torch.float16):", "            loss = model(x, y)",
            "        scaler.scale(loss).backward()"]
    body += [f"        scaler.unscale_(o{i})" for i in range(n)]
    body += [f"        torch.nn.utils.clip_grad_norm_(o{i}.param_groups[0]['params'], 1.0)" for i in range(n)]
    body += [f"        scaler.step(o{i})" for i in range(n)]
    body += ["        scaler.update()"]
    return "t.py", HEADER + "\n".join(body) + "\n"


def branches(n: int) -> tuple[str, str]:
    body = ["def step(opt, model, loader, flags):", "    scaler = torch.amp.GradScaler('cuda')", "    for x, y in loader:",
            "        loss = model(x, y)", "        scaler.scale(loss).backward()"]
    for i in range(n):
        body += [f"        if flags[{i}]:", "            scaler.unscale_(opt)" if i % 2 else
                 "            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)"]
    body += ["        scaler.step(opt)", "        scaler.update()"]
    return "t.py", HEADER + "\n".join(body) + "\n"


def step_branches(n: int) -> tuple[str, str]:
    body = ["scaler = torch.amp.GradScaler('cuda')", "for x, y in loader:", "    scaler.scale(model(x, y)).backward()"]
    for i in range(n):
        body += [f"    if c{i}:", "        scaler.step(opt)", f"    elif d{i}:", "        scaler.update()", "    else:",
                 "        scaler.unscale_(opt)"]
    return "t.py", HEADER + "\n".join(body) + "\n"


def scalers(n: int) -> tuple[str, str]:
    loop = ("scaler = torch.amp.GradScaler('cuda')\nfor x in loader:\n    scaler.scale(model(x)).backward()\n"
            "    scaler.step(opt)\n")
    return "t.py", HEADER + loop + "".join(f"s{i} = torch.amp.GradScaler('cuda')\n" for i in range(n))


def functions(n: int) -> tuple[str, str]:
    parts = [HEADER]
    for i in range(n):
        parts.append(f"def train_{i}(model, opt, loader):\n    scaler = torch.amp.GradScaler('cuda')\n"
                     "    for x, y in loader:\n        for k in range(4):\n            loss = model(x, y)\n"
                     "            scaler.scale(loss).backward()\n            if k % 2:\n"
                     "                scaler.unscale_(opt)\n        scaler.step(opt)\n        scaler.update()\n\n")
    return "t.py", "".join(parts)


def cells(n: int) -> tuple[str, str]:
    cs = [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
           "source": ["import torch\n", "scaler = torch.amp.GradScaler('cuda')\n"]}]
    for i in range(n):
        src = ["loss = model(x)\n", "scaler.scale(loss).backward()\n", "scaler.step(opt)\n"] if i % 10 == 0 else \
            [f"metrics_{i} = compute({i})\n", f"print(metrics_{i})\n"]
        cs.append({"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": src})
    nb = {"cells": cs, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    return "t.ipynb", json.dumps(nb, indent=1) + "\n"


def literal(n: int) -> tuple[str, str]:
    loop = ("scaler = torch.amp.GradScaler('cuda')\nfor x in loader:\n    scaler.scale(model(x)).backward()\n"
            "    scaler.step(opt)\n")
    return "t.py", HEADER + loop + "DATA = [" + ", ".join(str(i * 7919 % 100003) for i in range(n)) + "]\n"


def literal_rows(n: int) -> tuple[str, str]:
    loop = ("scaler = torch.amp.GradScaler('cuda')\nfor x in loader:\n    scaler.scale(model(x)).backward()\n"
            "    scaler.step(opt)\n")
    rows = "".join(f"    'key{i}': ({i}, -{i}.25, 'v{i}', None),\n" for i in range(n))
    return "t.py", HEADER + loop + "TABLE = {\n" + rows + "}\n"


def dense_code(kb: int) -> tuple[str, str]:
    corpus = Path(os.environ.get("AMPLINT_CORPUS") or Path.home() / ".cache" / "amplint-corpus")
    files = sorted(p for p in corpus.rglob("*.py") if ".wheels" not in p.parts) if corpus.exists() else []
    out = [HEADER, "scaler = torch.amp.GradScaler('cuda')\nfor x in loader:\n    scaler.scale(model(x)).backward()\n"
           "    scaler.step(opt)\n"]
    size = 0
    for p in files or [ROOT / "amplint" / "engine.py"] * 1000:
        text = p.read_text(encoding="utf-8", errors="replace")
        if "from __future__" in text:
            continue
        try:
            compile(text, str(p), "exec", dont_inherit=True)
        except (SyntaxError, ValueError):
            continue
        out.append(text + "\n")
        size += len(text)
        if size >= kb * 1024:
            break
    return "t.py", "".join(out)


def dict_calls(n: int) -> tuple[str, str]:
    body = HEADER + "scaler = torch.amp.GradScaler('cuda')\nfor x in loader:\n    scaler.scale(model(x)).backward()\n" \
        "    scaler.step(opt)\n"
    return "t.py", body + "X = {" + ", ".join(f'"k{i}": scaler.scale({i})' for i in range(n)) + "}\n"


def scaled_names(n: int) -> tuple[str, str]:
    body = HEADER + "scaler = torch.amp.GradScaler('cuda')\nfor x in loader:\n    scaler.scale(model(x)).backward()\n" \
        "    scaler.step(opt)\n"
    return "t.py", body + "".join(f"y{i} = scaler.scale({i})\n" for i in range(n))


SHAPES = {
    "unscale_calls": (unscale_calls, [16, 32, 64, 128, 1600]),
    "branches": (branches, [50, 100, 200, 400, 3400]),
    "step_branches": (step_branches, [80, 160, 320, 2000]),
    "scalers": (scalers, [500, 1000, 2000, 5700]),
    "functions": (functions, [50, 100, 200, 400, 740]),
    "cells": (cells, [500, 1000, 2000, 4000]),
    "literal": (literal, [50_000, 100_000, 200_000]),
    "literal_rows": (literal_rows, [10_000, 20_000, 40_000]),
    "dense_code": (dense_code, [125, 250, 500, 1000]),
    "dict_calls": (dict_calls, [2_000, 4_000, 8_000, 20_000]),
    "scaled_names": (scaled_names, [500, 1_000, 2_000, 6_700]),
    "oversize": (None, [10, 100, 400]),
}


def measure(args: list[str], cwd: Path) -> tuple[float, float, int, bool]:
    """Wall seconds, peak RSS (MB), exit status of one amplint process, and whether it analysed
    its input (no "not analysed" warning)."""
    import subprocess

    with tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "amplint", *args], cwd=cwd, stdout=subprocess.DEVNULL, stderr=err)
        _pid, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - t0
        err.seek(0)
        analysed = b"not analysed" not in err.read()
    proc.returncode = os.waitstatus_to_exitcode(status)
    return elapsed, usage.ru_maxrss / 1024, proc.returncode, analysed


def run_shape(name: str, runs: int, work: Path) -> list[dict]:
    make, sizes = SHAPES[name]
    rows = []
    base = None
    for size in sizes:
        d = work / f"{name}-{size}"
        d.mkdir()
        if name == "oversize":
            files = []
            for suffix in (".py", ".ipynb"):
                f = d / f"t{suffix}"
                with open(f, "wb") as h:
                    h.write(b"import torch\nscaler = torch.amp.GradScaler('cuda')\n")
                    h.truncate(size * 1024 * 1024)
                files.append(f.name)
            nbytes = size * 1024 * 1024
        else:
            fname, text = make(size)
            (d / fname).write_text(text, encoding="utf-8")
            files = [fname]
            nbytes = len(text.encode())
        best = None
        for _ in range(runs):
            t, mb, rc, analysed = measure(["--no-cache", "--isolated", *files], d)
            if best is None or t < best[0]:
                best = (t, mb, rc, analysed)
        t, mb, rc, analysed = best
        base = base or t
        rows.append({"shape": name, "n": size, "bytes": nbytes, "seconds": t, "peak_mb": mb, "exit": rc,
                     "ratio": t / base, "under_limit": nbytes <= MAX_FILE_SIZE, "analysed": analysed})
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shape", action="append", choices=sorted(SHAPES))
    ap.add_argument("--runs", type=int, default=1, help="runs per input (the fastest is kept)")
    ap.add_argument("--check", action="store_true", help="exit 1 if an acceptance bound is broken")
    ap.add_argument("--json", help="also write the rows to this file")
    args = ap.parse_args()
    names = args.shape or list(SHAPES)
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="amplint-shapes-") as tmp:
        for name in names:
            rows += run_shape(name, args.runs, Path(tmp))
    print(f"{'shape':<14} {'n':>8} {'size':>10} {'time':>8} {'x 1x':>6} {'peak':>8} exit analysed")
    failures = []
    for r in rows:
        size = f"{r['bytes'] / 1024:.0f} KB" if r["bytes"] < 10 * 1024 * 1024 else f"{r['bytes'] / 1024**2:.0f} MB"
        mark = ""
        if r["under_limit"] and (r["seconds"] >= 5 or r["peak_mb"] >= 500):
            mark = "  over 5 s / 500 MB"
            failures.append(r)
        if r["exit"] not in (0, 1):
            mark += f"  exit {r['exit']}"
            failures.append(r)
        print(f"{r['shape']:<14} {r['n']:>8} {size:>10} {r['seconds']:>7.2f}s {r['ratio']:>5.1f}x {r['peak_mb']:>6.0f}MB"
              f" {r['exit']:>4} {'yes' if r['analysed'] else 'no':>8}{mark}")
    for shape in ("unscale_calls", "step_branches"):  # the shapes whose N counts protocol calls
        proto = [r for r in rows if r["shape"] == shape]
        if len(proto) >= 3:
            r4 = proto[2]["seconds"] / proto[0]["seconds"]
            print(f"{shape}: 4x the calls ({proto[0]['n']} -> {proto[2]['n']}) costs {r4:.1f}x the time (bound: 5x)")
            if r4 > 5:
                failures.append(proto[2])
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")
    return 1 if args.check and failures else 0


if __name__ == "__main__":
    sys.exit(main())
