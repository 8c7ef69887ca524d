"""The language server's incremental parse: an edit re-parses the top-level statements it
touched and reuses the others; the tree is always the one a whole parse gives."""

from __future__ import annotations

import random

import libcst as cst
import pytest
from helpers import CASES, FIXTURES

from amplint.engine import Linter, default_settings
from amplint.incremental import IncrementalParser

SOURCES = sorted(FIXTURES.rglob("*.py")) + sorted(CASES.rglob("*.py"))


def _edits(text: str, rng: random.Random, n: int):
    """A sequence of texts, each one edit away from the last: a line changed, a line inserted
    (at its neighbour's indentation), a blank line inserted, a line deleted."""
    lines = text.splitlines(keepends=True)
    for k in range(n):
        i = rng.randrange(len(lines))
        new = list(lines)
        kind = rng.random()
        if kind < 0.35 and lines[i].strip():
            new[i] = lines[i].rstrip("\r\n") + f"  # edit {k}\n"
        elif kind < 0.6:
            indent = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
            new.insert(i, f"{indent}x_{k} = {k}\n")
        elif kind < 0.8:
            new.insert(i, "\n")
        elif len(new) > 2:
            del new[i]
        lines = new
        yield "".join(new)


def _parses(text: str) -> bool:
    try:
        cst.parse_module(text)
        return True
    except cst.ParserSyntaxError:
        return False


@pytest.mark.parametrize("path", SOURCES[::3], ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_edit_gives_the_whole_parse(path):
    text = path.read_text(encoding="utf-8")
    if not _parses(text):
        pytest.skip("not Python as written")
    parser = IncrementalParser()
    parser(text, "doc")
    rng = random.Random(path.name)
    for new in _edits(text, rng, 12):
        if not _parses(new):
            continue
        tree = parser(new, "doc")
        assert tree.code == new
        assert tree.deep_equals(cst.parse_module(new))


def test_an_edit_in_one_function_reuses_the_others():
    text = "\n\n".join((FIXTURES / f"AMP00{k}" / "good.py").read_text().split('if __name__ == "__main__":')[0]
                        for k in range(1, 6))
    parser = IncrementalParser()
    before = parser(text, "doc")
    row = text.index("scaler.update()")
    new = text[:row] + "scaler.update()  # edited" + text[row + len("scaler.update()"):]
    after = parser(new, "doc")
    assert after.code == new and after.deep_equals(cst.parse_module(new))
    kept = sum(1 for s in after.body if any(s is t for t in before.body))
    assert kept == len(after.body) - 1  # every top-level statement but the edited one


def test_findings_are_those_of_a_whole_parse():
    text = (FIXTURES / "AMP001" / "good.py").read_text()
    plain, incremental = Linter(default_settings()), Linter(default_settings())
    incremental.module_parser = IncrementalParser()
    rng = random.Random(1)
    texts = [text, text.replace("        scaler.update()\n", "        pass\n"), text] + list(_edits(text, rng, 20))
    for t in texts:
        if not _parses(t):
            continue
        got = [(d.code, d.location, d.message) for d in incremental.check_bytes(t.encode(), "train.py").diagnostics]
        want = [(d.code, d.location, d.message) for d in plain.check_bytes(t.encode(), "train.py").diagnostics]
        assert got == want


def test_what_cannot_be_spliced_is_parsed_whole():
    parser = IncrementalParser()
    a = "import torch\n\n\ndef f():\n    return 1\n"
    parser(a, "doc")
    # another default indentation in the edited statement: the whole text is parsed
    b = "import torch\n\n\ndef f():\n\treturn 2\n"
    assert parser(b, "doc").deep_equals(cst.parse_module(b))
    # every statement changed, nothing reused
    c = "x = 1\n"
    assert parser(c, "doc").deep_equals(cst.parse_module(c))
    parser.forget("doc")
    assert "doc" not in parser._last
