"""Fuzzing at CI size: generated programs and mutated fixtures never make amplint raise, and
fixes stay safe. The long run (10,000+ programs) is bench/fuzz.py."""

from __future__ import annotations

import random

import pytest
from fuzzlib import check_fixes, lint, mutate
from helpers import CASES, FIXTURES

SEEDS = sorted(FIXTURES.glob("AMP*/*.py")) + sorted(CASES.rglob("*.py"))


@pytest.mark.parametrize("path", SEEDS, ids=[f"{p.parent.name}/{p.name}" for p in SEEDS])
def test_fixes_are_safe_on_seed_files(path):
    check_fixes(path.read_text(encoding="utf-8"), path.name)


def test_mutated_seeds_never_raise():
    rng = random.Random(20261202)
    texts = [p.read_text(encoding="utf-8") for p in SEEDS]
    for _ in range(300):
        text = rng.choice(texts)
        for _ in range(rng.randint(1, 3)):
            text = mutate(text, rng)
        lint(text)


def test_mutated_seeds_fixes_are_safe():
    rng = random.Random(7)
    texts = [p.read_text(encoding="utf-8") for p in SEEDS]
    for _ in range(60):
        text = mutate(rng.choice(texts), rng)
        check_fixes(text)


hypothesmith = pytest.importorskip("hypothesmith", reason="hypothesmith is in the test extra")


@pytest.mark.filterwarnings("ignore")
def test_generated_programs_never_raise():
    from hypothesis import HealthCheck, given, settings

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
    @given(hypothesmith.from_grammar())
    def check(source):
        lint("import torch\nscaler = torch.amp.GradScaler('cuda')\n" + source)

    check()
