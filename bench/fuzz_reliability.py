"""Long reliability fuzz run (issue 19; not part of the default tests).

    python bench/fuzz_reliability.py [--py 4000] [--notebooks 1000] [--seed 1] [--keep DIR]

Mutates the fixtures' and test cases' training loops (lines deleted, swapped, indented,
duplicated; CRLF/CR endings, form feeds, tabs, control characters and malformed noqa comments)
and builds notebooks from them (random cells, list or string sources, JSON styles, form feeds,
U+2028, trailing blank lines), lints and fixes each in-process, then runs the command line
(lint, cached lint, --diff, --fix) over all of them. Prints the counts: tracebacks, exit codes
outside 0/1/2, false AMP000 (an AMP000 on code CPython compiles that does not name a limit),
fixes that change more than the fix, unsound fixes, notebook/.py drift. Exits 1 if any is not 0.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import relfuzz  # noqa: E402

BAD = ("tracebacks", "exit_codes_outside_0_1_2", "false_amp000", "fix_overreach", "fix_unsound", "notebook_drift")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--py", type=int, default=4000)
    ap.add_argument("--notebooks", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", help="write the mutants here (kept) instead of a temporary directory")
    args = ap.parse_args()
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="amplint-fuzz-"))
    t0 = time.perf_counter()
    counts = relfuzz.run(args.py, args.notebooks, args.seed, work)
    t1 = time.perf_counter()
    relfuzz.cli_exit_codes(work, counts)
    t2 = time.perf_counter()
    total = counts["py_mutants"] + counts["nb_mutants"]
    print(f"mutants: {total} ({counts['py_mutants']} .py, {counts['nb_mutants']} notebooks), seed {args.seed}")
    print(f"fixed in-process: {counts['py_fixed']} .py, {counts['nb_fixed']} notebooks; "
          f"command-line runs over all of them: {counts['cli_runs']}")
    for k in BAD:
        print(f"{k}: {counts[k]}")
    print(f"time: {t1 - t0:.1f} s in-process, {t2 - t1:.1f} s command line")
    for what, text in relfuzz.FAILURES[:5]:
        print(f"--- {what}\n{text[:2000]}\n---", file=sys.stderr)
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if any(counts[k] for k in BAD) else 0


if __name__ == "__main__":
    sys.exit(main())
