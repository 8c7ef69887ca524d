"""Every annotated case file under tests/cases reports exactly its ``# error:`` markers."""

from __future__ import annotations

import pytest
from helpers import CASES, expected, found

CASE_FILES = sorted(CASES.rglob("*.py"))


@pytest.mark.parametrize("path", CASE_FILES, ids=[str(p.relative_to(CASES)) for p in CASE_FILES])
def test_case(path):
    assert found(path) == expected(path)


def test_cases_exist():
    assert len(CASE_FILES) >= 20
    assert any(expected(p) for p in CASE_FILES)
    assert any(not expected(p) for p in CASE_FILES)
