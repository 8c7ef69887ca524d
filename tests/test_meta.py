"""Every rule is complete: unique code and name, full docs, a fixture pair, test cases, fresh docs."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from helpers import CASES, FIXTURES, ROOT, expected

from amplint import docgen
from amplint.prefilter import TRIGGERS
from amplint.screen import SCREENS
from amplint.rules import all_rules
from amplint.rules.base import SECTIONS

RULES = all_rules()


def test_codes_and_names_unique():
    codes = [r.code for r in RULES]
    names = [r.name for r in RULES]
    assert len(codes) == len(set(codes))
    assert len(names) == len(set(names))


@pytest.mark.parametrize("rule", RULES, ids=[r.code for r in RULES])
def test_rule_shape(rule):
    assert re.fullmatch(r"AMP\d{3}", rule.code)
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)+", rule.name), "kebab-case name"
    assert rule.message
    assert rule.fix_title or rule.fix_availability == "none"
    assert rule.fix_availability in ("none", "sometimes", "always")
    assert rule.triggers and all(t in TRIGGERS for t in rule.triggers)
    assert rule.screen is None or rule.screen in SCREENS
    assert rule.severity in ("error", "warning", "info")
    module = sys.modules[rule.__module__].__name__.rsplit(".", 1)[-1]
    assert module.startswith(rule.code.lower() + "_"), "one module per rule, named after its code"
    assert module == f"{rule.code.lower()}_{rule.name.replace('-', '_')}"


@pytest.mark.parametrize("rule", RULES, ids=[r.code for r in RULES])
def test_docstring_sections(rule):
    sections = rule.doc_sections()
    assert list(sections) == list(SECTIONS), f"sections must be exactly {SECTIONS}"
    for name, body in sections.items():
        assert body.strip(), f"{rule.code}: empty section {name!r}"
    assert "reported" in sections["What it does"], "say which line the finding is reported on"
    assert "```python" in sections["Example"] and "```python" in sections["Use instead"]


@pytest.mark.parametrize("rule", RULES, ids=[r.code for r in RULES])
def test_fixture_pair_and_cases(rule):
    bad = FIXTURES / rule.code / "bad.py"
    good = FIXTURES / rule.code / "good.py"
    assert bad.is_file() and good.is_file()
    assert (rule.code, ) in {(c,) for c, _ in expected(bad)}
    marked = [p for p in CASES.rglob("*.py") if any(c == rule.code for c, _ in expected(p))]
    assert marked, f"no test case under tests/cases reports {rule.code}"


def test_docs_are_generated_from_docstrings():
    stale = [p for p, text in docgen.expected_files().items() if not p.exists() or p.read_text(encoding="utf-8") != text]
    assert not stale, f"run `python -m amplint.docgen`: stale {stale}"


def test_linter_import_path_is_light():
    code = "import sys, amplint.cli, amplint.rules; r = amplint.rules.all_rules(); " \
           "bad = [m for m in ('libcst', 'torch', 'amplint.model') if m in sys.modules]; print(bad); sys.exit(1 if bad else 0)"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_flow_modules_stay_small():
    """Each idea of the typestate flow keeps a module of its own (at most 400 lines)."""
    sizes = {p.name: len(p.read_text(encoding="utf-8").splitlines())
             for p in (ROOT / "amplint" / "model" / "flow").glob("*.py")}
    assert sizes and all(n <= 400 for n in sizes.values()), sorted(sizes.items(), key=lambda kv: -kv[1])[:3]
