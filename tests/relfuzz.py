"""Reliability fuzzing (issue 19), shared by tests/test_fuzz_reliability.py (a few hundred mutants
in the normal run) and bench/fuzz_reliability.py (the long run).

Mutants are training loops (the fixtures and test cases) changed line by line (deleted, swapped,
indented, duplicated), and in their bytes (CRLF or CR line endings, form feeds, tabs, control
characters in comments, non-ASCII text, malformed ``noqa`` comments), and notebooks built from
them (cells split at random lines, list or string sources, JSON styles, magics, markdown cells,
trailing blank lines). For each mutant it counts:

- ``tracebacks``: amplint raised or reported an internal error;
- ``false_amp000``: an AMP000 on code CPython compiles that does not say which limit was hit;
- ``fix_overreach``: ``--fix`` changed lines no fix edit touches (for a notebook: any byte of the
  file outside the code cells' sources, or a cell without a finding);
- ``fix_unsound``: the fixed text does not parse, or a second ``--fix`` changes it again;
- ``notebook_drift``: a notebook's findings differ from the same code as a ``.py`` file.

Exit codes outside 0/1/2 are counted by running the command line over the mutants written to
disk (:func:`cli_exit_codes`).
"""

from __future__ import annotations

import ast
import difflib
import json
import os
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path

from fuzzlib import LINE_MUTATIONS, mutate

ROOT = Path(__file__).resolve().parents[1]
FAILURES: list[tuple[str, str]] = []  # (what, the mutant): for the report of a failing run
LIMIT_WORDS = ("LibCST", "expression chain", "nested too deeply", "too large to analyse", "null bytes", "UTF-16")


def seeds() -> list[str]:
    paths = sorted((ROOT / "fixtures").glob("AMP*/*.py")) + sorted((ROOT / "tests" / "cases").rglob("*.py"))
    return [p.read_text(encoding="utf-8") for p in paths]


_LINTER = None


def linter():
    global _LINTER
    if _LINTER is None:
        from amplint.config import CliOverrides, build_settings
        from amplint.engine import Linter
        from amplint.rules import all_rules

        _LINTER = Linter(build_settings([], CliOverrides(isolated=True, select=["ALL"]), all_rules()))
    return _LINTER


# --- mutations ----------------------------------------------------------------------------------


def mutate_lines(text: str, rng: random.Random) -> str:
    return mutate(text, rng, LINE_MUTATIONS + ("wrap_if",))


_COMMENTS = ["# caf\u00e9 \u2014 r\u00e9sum\u00e9", "# \x1b]52;c;aGk=\x07 clipboard", "# \x1b[31mred\x1b[0m",
             "# noqa:", "# amplint: noqa AMP013", "# noqa: AMP-013", "# \u202eevil", "# a\u2028b", "# tab\there"]


def mutate_bytes(text: str, rng: random.Random) -> str:
    kind = rng.choice(["crlf", "cr", "formfeed", "tabs", "comment", "trailing", "none"])
    if kind == "crlf":
        return text.replace("\n", "\r\n")
    if kind == "cr":
        return text.replace("\n", "\r")
    lines = text.split("\n")
    if not lines:
        return text
    i = rng.randrange(len(lines))
    if kind == "formfeed":
        lines[i] = "\x0c" + lines[i]
    elif kind == "tabs":
        lines = [ln.replace("    ", "\t") for ln in lines]
    elif kind == "comment":
        lines[i] = lines[i] + "  " + rng.choice(_COMMENTS)
    elif kind == "trailing":
        lines.extend([""] * rng.randint(1, 3))
    return "\n".join(lines)


def py_mutant(rng: random.Random, texts: list[str]) -> str:
    text = rng.choice(texts)
    for _ in range(rng.randint(1, 3)):
        text = mutate_lines(text, rng)
    if rng.random() < 0.5:
        text = mutate_bytes(text, rng)
    return text


def nb_mutant(rng: random.Random, texts: list[str]) -> tuple[str, list[str]]:
    """A notebook (JSON text) and its code cells' sources."""
    text = rng.choice(texts)
    if rng.random() < 0.5:
        text = mutate_lines(text, rng)
    nl = rng.choice(["\n", "\n", "\r\n"])
    lines = text.replace("\r\n", "\n").split("\n")
    cuts = sorted(rng.sample(range(1, max(2, len(lines))), k=min(len(lines) - 1, rng.randint(0, 4)))) if len(lines) > 2 else []
    parts, last = [], 0
    for c in cuts + [len(lines)]:
        parts.append(nl.join(lines[last:c]))
        last = c
    codes = []
    for p in parts:
        if rng.random() < 0.2:
            p = p + nl * rng.randint(1, 2)  # trailing blank lines
        if rng.random() < 0.15 and p.strip():
            p = "\x0c" + p if rng.random() < 0.5 else p.replace("\n", "  # note\u2028x\n", 1)
        codes.append(p)
    cells = []
    for k, p in enumerate(codes):
        if rng.random() < 0.3:
            cells.append({"cell_type": "markdown", "metadata": {}, "source": ["# caf\u00e9 %d\n" % k, "text \u2014 more"]})
        source = p.splitlines(True) if rng.random() < 0.7 else p
        cells.append({"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": source})
    indent = rng.choice([1, 1, 2, "\t", None])
    ensure_ascii = rng.random() < 0.3
    nb = {"cells": cells, "metadata": {"language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(nb, indent=indent, ensure_ascii=ensure_ascii) + ("\n" if rng.random() < 0.8 else ""), codes


# --- checks -------------------------------------------------------------------------------------


def compiles(text: str) -> bool:
    try:
        compile(text, "m.py", "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
        return True
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False


def _false_amp000(result, text: str) -> int:
    if not compiles(text):
        return 0
    return sum(1 for d in result.diagnostics if d.code == "AMP000" and not any(w in d.message for w in LIMIT_WORDS))


def _edit_rows(diags) -> set[int]:
    rows: set[int] = set()
    for d in diags:
        if d.fix is None:
            continue
        for e in d.fix.edits:
            rows.update(range(e.location.row, e.end_location.row + 1))
    return rows


def _changed_rows(old: str, new: str) -> set[int]:
    from amplint.lines import split_lines

    a, b = split_lines(old, keepends=True), split_lines(new, keepends=True)
    rows: set[int] = set()
    for tag, i1, i2, _j1, _j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag != "equal":
            rows.update(range(i1 + 1, max(i2, i1 + 1) + 1))
    return rows


def check_py(text: str, counts: Counter) -> None:
    from amplint.engine import decode
    from amplint.fixer import _is_syntax_error, fix_source

    counts["py_mutants"] += 1
    data = text.encode("utf-8", "surrogatepass")
    try:
        first = linter().check_bytes(data, "m.py", explicit=True, force=True)
    except Exception:  # noqa: BLE001 - counted
        counts["tracebacks"] += 1
        return
    counts["tracebacks"] += bool(first.errors)
    false = _false_amp000(first, text)
    counts["false_amp000"] += false
    if false:
        FAILURES.append(("false AMP000 (py)", text))
    if first.source is None or _is_syntax_error(first) or not any(d.fix for d in first.diagnostics):
        return
    counts["py_fixed"] += 1
    try:
        fixed, _r, n = fix_source(linter(), first.source, "m.py", first, unsafe=True)
        if fixed == first.source.text:
            return
        if not compiles(fixed):
            counts["fix_unsound"] += 1
            FAILURES.append(("fix_unsound (py)", text))
            return
        again, _r2, n2 = fix_source(linter(), decode(fixed.encode()), "m.py",
                                    linter().check_bytes(fixed.encode(), "m.py", force=True), unsafe=True)
        if again != fixed:
            counts["fix_unsound"] += 1
            FAILURES.append(("fix_unsound: a second --fix changes it (py)", text))
        # every changed line is one a fix edit touches (first round), give or take the line the
        # edit inserts before or after
        allowed = _edit_rows(first.diagnostics)
        allowed |= {r + 1 for r in allowed} | {r - 1 for r in allowed}
        if not _changed_rows(first.source.text, fixed) <= allowed and n <= 1:
            counts["fix_overreach"] += 1
            FAILURES.append(("fix_overreach (py)", text))
    except Exception:  # noqa: BLE001 - counted
        counts["tracebacks"] += 1


def check_notebook(raw: str, codes: list[str], workdir: Path, counts: Counter) -> None:
    """Lint and fix one notebook (a real file under ``workdir``)."""
    from amplint.config import CliOverrides, build_settings
    from amplint.fixer import fix_paths
    from amplint.notebook import prepare
    from amplint.rules import all_rules

    counts["nb_mutants"] += 1
    f = workdir / f"nb{counts['nb_mutants']}.ipynb"
    f.write_text(raw, encoding="utf-8")
    try:
        result = linter().check_path(f, True)
    except Exception:  # noqa: BLE001
        counts["tracebacks"] += 1
        return
    counts["tracebacks"] += bool(result.errors)
    module = "\n".join(c if c.endswith(("\n", "\r")) or not c else c + "\n" for c in codes)
    if compiles(module):
        counts["false_amp000"] += _false_amp000(result, module)
        py = linter().check_bytes(module.encode("utf-8"), "m.py", explicit=True)
        if Counter(d.code for d in py.diagnostics) != Counter(d.code for d in result.diagnostics):
            counts["notebook_drift"] += 1
            FAILURES.append(("notebook_drift", raw))
    if not any(d.fix for d in result.diagnostics) or any(d.code == "AMP000" for d in result.diagnostics):
        return
    counts["nb_fixed"] += 1
    try:
        settings = build_settings([str(f)], CliOverrides(isolated=True, select=["ALL"]), all_rules())
        fix_paths([str(f)], settings, unsafe=True)
        new = f.read_text(encoding="utf-8")
        if new == raw:
            return
        before, after = prepare(raw.encode()), prepare(new.encode())
        spans = sorted(before.spans.items())
        # outside the code cells' sources, every byte is the original's
        pos_old, pos_new = 0, 0
        for index, span in spans:
            other = after.spans[index]
            if raw[pos_old:span.start] != new[pos_new:other.start]:
                counts["fix_overreach"] += 1
                FAILURES.append(("fix_overreach (notebook bytes)", raw))
                return
            pos_old, pos_new = span.end, other.end
        if raw[pos_old:] != new[pos_new:]:
            counts["fix_overreach"] += 1
            FAILURES.append(("fix_overreach (notebook tail)", raw))
            return
        # a cell without a finding is untouched (a later round may fix a finding whose fix only
        # appears once another is applied: an import emptied by the fixes of its uses)
        fixed_cells = {d.cell for d in result.diagnostics}
        for old_cell, new_cell in zip(before.cells, after.cells):
            if old_cell.index not in fixed_cells and old_cell.source != new_cell.source:
                counts["fix_overreach"] += 1
                FAILURES.append((f"fix_overreach (notebook cell {old_cell.index})", raw))
                return
        if not compiles(after.text):
            counts["fix_unsound"] += 1
            FAILURES.append(("fix_unsound (notebook)", raw))
    except Exception:  # noqa: BLE001
        counts["tracebacks"] += 1


def cli_exit_codes(directory: Path, counts: Counter, extra: tuple[str, ...] = ()) -> None:
    """The command line over every mutant written to ``directory``: lint, --fix, --diff."""
    for args in (["--no-cache", "--isolated", "--select", "ALL"], ["--isolated", "--select", "ALL"],
                 ["--no-cache", "--isolated", "--select", "ALL", "--diff", "--unsafe-fixes"],
                 ["--no-cache", "--isolated", "--select", "ALL", "--fix", "--unsafe-fixes"]):
        p = subprocess.run([sys.executable, "-m", "amplint", *args, *extra, "."], cwd=directory, capture_output=True,
                           timeout=1800, env=dict(os.environ, PYTHONHASHSEED="0"))
        counts["cli_runs"] += 1
        counts["exit_codes_outside_0_1_2"] += p.returncode not in (0, 1, 2)
        counts["tracebacks"] += b"Traceback" in p.stderr or b"internal error" in p.stderr


def run(n_py: int, n_nb: int, seed: int, workdir: Path) -> Counter:
    rng = random.Random(seed)
    texts = seeds()
    counts: Counter = Counter()
    pydir = workdir / "py"
    pydir.mkdir(parents=True, exist_ok=True)
    for i in range(n_py):
        text = py_mutant(rng, texts)
        check_py(text, counts)
        (pydir / f"m{i}.py").write_text(text, encoding="utf-8", newline="")
    nbdir = workdir / "nb"
    nbdir.mkdir(parents=True, exist_ok=True)
    for _ in range(n_nb):
        raw, codes = nb_mutant(rng, texts)
        check_notebook(raw, codes, nbdir, counts)
    return counts
