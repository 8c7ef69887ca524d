"""The fixtures contract: every marker of every bad.py is reported, good.py is clean."""

from __future__ import annotations

import pytest
from helpers import FIXTURES, expected, found

RULE_DIRS = sorted(p for p in FIXTURES.iterdir() if p.is_dir() and p.name.startswith("AMP"))


@pytest.mark.parametrize("rule_dir", RULE_DIRS, ids=[p.name for p in RULE_DIRS])
def test_bad_reports_exactly_the_markers(rule_dir):
    bad = rule_dir / "bad.py"
    want = expected(bad)
    assert want, f"{bad} has no `# error:` marker"
    assert {code for code, _ in want} >= {rule_dir.name}, "bad.py must exercise its own rule"
    assert found(bad) == want


@pytest.mark.parametrize("rule_dir", RULE_DIRS, ids=[p.name for p in RULE_DIRS])
def test_good_is_clean(rule_dir):
    good = rule_dir / "good.py"
    assert not expected(good)
    assert found(good) == set()


@pytest.mark.parametrize("rule_dir", RULE_DIRS, ids=[p.name for p in RULE_DIRS])
def test_pair_defines_train(rule_dir):
    for name in ("bad.py", "good.py"):
        text = (rule_dir / name).read_text(encoding="utf-8")
        assert "def train(model, optimizer, batches, device" in text, f"{rule_dir.name}/{name}: no train() entry point"
