"""Long fuzz run (not part of the default tests): lint N generated and mutated programs.

    python bench/fuzz.py --programs 10000 [--seed 1] [--generated-share 0.3]

Generated programs come from hypothesmith (Python's grammar); mutated ones from the fixtures and
test cases (statements deleted, swapped, indented, duplicated). Every program must lint without
an exception or internal error; every fix must keep the file parseable, remove its own finding
and leave the others unchanged (checked on a share of the mutated programs). Prints counts and
timings; exits 1 on the first failure, printing the program.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from fuzzlib import check_fixes, lint, mutate  # noqa: E402


def generated(n: int, seed: int):
    from hypothesis import HealthCheck, given, settings
    import hypothesmith

    out: list[str] = []

    @settings(max_examples=n, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(hypothesmith.from_grammar())
    def collect(source):
        out.append(source)

    warnings.simplefilter("ignore")
    collect()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--programs", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--generated-share", type=float, default=0.3)
    ap.add_argument("--fix-every", type=int, default=10, help="check fix safety on every Nth mutated program")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    seeds = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "fixtures").glob("AMP*/*.py"))]
    seeds += [p.read_text(encoding="utf-8") for p in sorted((ROOT / "tests" / "cases").rglob("*.py"))]
    n_gen = int(args.programs * args.generated_share)
    t0 = time.perf_counter()
    gen = generated(n_gen, args.seed)
    t_gen = time.perf_counter() - t0
    counts = {"generated": 0, "mutated": 0, "syntax_errors": 0, "findings": 0, "fixes_checked": 0}
    t1 = time.perf_counter()
    header = "import torch\nscaler = torch.amp.GradScaler('cuda')\n"
    programs = [("generated", header + g) for g in gen]
    for _ in range(args.programs - len(programs)):
        text = rng.choice(seeds)
        for _ in range(rng.randint(1, 4)):
            text = mutate(text, rng)
        programs.append(("mutated", text))
    for i, (kind, text) in enumerate(programs):
        try:
            result = lint(text)
            counts[kind] += 1
            counts["syntax_errors"] += any(d.code == "AMP000" for d in result.diagnostics)
            counts["findings"] += sum(d.code != "AMP000" for d in result.diagnostics)
            if kind == "mutated" and i % args.fix_every == 0:
                counts["fixes_checked"] += check_fixes(text)
        except Exception as e:  # noqa: BLE001 - report the program that broke
            print(f"FAILED on program {i} ({kind}): {type(e).__name__}: {e}\n---\n{text}\n---", file=sys.stderr)
            return 1
    t_lint = time.perf_counter() - t1
    total = counts["generated"] + counts["mutated"]
    print(f"programs linted: {total} ({counts['generated']} generated, {counts['mutated']} mutated)")
    print(f"syntax errors reported (AMP000): {counts['syntax_errors']}; findings: {counts['findings']}")
    print(f"fixes checked for safety: {counts['fixes_checked']}")
    print(f"exceptions: 0; generation {t_gen:.1f} s, linting {t_lint:.1f} s ({total / t_lint:.0f} programs/s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
