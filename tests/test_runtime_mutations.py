"""Mutation tests of the harness: a verdict must follow the runs, not the rule's declaration.

For every rule, three mutated copies of its fixture pair go through a real `amplint verify`:

- bad.py fixed (by amplint's own fix where the rule has one for the fixture, else replaced by
  good.py): the runtime verdict must stop confirming anything;
- good.py broken (the fix undone: good.py replaced by bad.py): the twin must be flagged;
- good.py not training (its learning rates set to 0 at the top of ``train``): GOOD FAILS.

Each kind is one verify run over all the mutated rules (three runs in all), so the whole module
costs about as much as three `amplint verify` runs.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import FIXTURES, ROOT, found

HAS_TORCH = importlib.util.find_spec("torch") is not None
pytestmark = [pytest.mark.runtime, pytest.mark.skipif(not HAS_TORCH, reason="needs torch (the runtime extra)")]

CODES = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir() and re.fullmatch(r"AMP\d{3}", p.name))
# verdicts that still claim something about the failure, or pass
CLAIMS = {"CONFIRMED", "MECHANISM ONLY", "NO RUNTIME EFFECT"}
PASSING = CLAIMS | {"NEEDS CUDA", "NEEDS CPU HOST", "NEEDS DISTRIBUTED"}
# rules whose only difference is not executable: fixing bad.py leaves identical runs
NOT_EXECUTABLE = {"AMP900"}
# amplint's fix is deliberately partial (AMP013 adds the scaler to the saved dict; the load side
# "needs a human"), so the resumed run still re-calibrates: the complete fix is good.py's
PARTIAL_FIX = {"AMP013"}

FREEZE = ("    for _group in optimizer.param_groups:  # mutation: no learning\n"
          "        _group[\"lr\"] = 0.0\n"
          "    optimizer.defaults[\"lr\"] = 0.0\n")


def _fix_bad(code: str, rule_dir: Path) -> str:
    """Fix bad.py with amplint's own fix (unsafe fixes included); fall back to good.py's text."""
    bad = rule_dir / "bad.py"
    if code in PARTIAL_FIX:
        shutil.copyfile(rule_dir / "good.py", bad)
        return "replaced by good.py"
    subprocess.run([sys.executable, "-m", "amplint", "--select", code, "--fix", "--unsafe-fixes", "--isolated",
                    str(bad)], capture_output=True, text=True, cwd=ROOT, timeout=120)
    if any(c == code for c, _ in found(bad)):
        shutil.copyfile(rule_dir / "good.py", bad)
        return "replaced by good.py"
    return "amplint --fix"


def _freeze_good(rule_dir: Path) -> None:
    good = rule_dir / "good.py"
    text = good.read_text()
    m = re.search(r"^def train\(.*\):\n", text, re.MULTILINE)
    assert m, f"{good}: no def train(...):"
    good.write_text(text[: m.end()] + FREEZE + text[m.end():])


def _verify(fixtures: Path, out: Path) -> tuple[subprocess.CompletedProcess, dict]:
    proc = subprocess.run([sys.executable, "-m", "amplint", "verify", "--device", "cpu", "--fixtures", str(fixtures),
                           "--json", str(out), "-q"], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    return proc, {r["code"]: r for r in json.loads(out.read_text())["rules"]}


@pytest.fixture(scope="module")
def mutated(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("mutations")
    how: dict[str, str] = {}
    runs = {}
    for kind in ("fix-bad", "break-good", "freeze-good"):
        dest = tmp / kind
        dest.mkdir()
        for code in CODES:
            shutil.copytree(FIXTURES / code, dest / code)
            if kind == "fix-bad":
                how[code] = _fix_bad(code, dest / code)
            elif kind == "break-good":
                shutil.copyfile(dest / code / "bad.py", dest / code / "good.py")
            else:
                _freeze_good(dest / code)
        runs[kind] = _verify(dest, tmp / f"{kind}.json")
    return runs, how


def test_at_least_twelve_rules_are_mutated():
    assert len(CODES) >= 12


@pytest.mark.parametrize("code", CODES)
def test_fixing_bad_stops_the_confirmation(mutated, code):
    runs, how = mutated
    proc, rules = runs["fix-bad"]
    r = rules[code]
    assert r["verdict"] not in PASSING, (how[code], r["verdict"], r["note"])
    if code in NOT_EXECUTABLE:  # the runs cannot tell a comment; the pairing check does
        assert r["verdict"] == "LINT MISMATCH" and r["runtime_verdict"] == "NO RUNTIME EFFECT"
    else:
        assert r["runtime_verdict"] not in CLAIMS, (how[code], r["runtime_verdict"], r["note"])
    assert proc.returncode == 1


@pytest.mark.parametrize("code", CODES)
def test_breaking_good_is_flagged(mutated, code):
    proc, rules = mutated[0]["break-good"]
    r = rules[code]
    assert r["verdict"] not in PASSING
    assert r["runtime_verdict"] not in PASSING or code in NOT_EXECUTABLE, (r["runtime_verdict"], r["note"])
    assert proc.returncode == 1


@pytest.mark.parametrize("code", CODES)
def test_a_twin_that_does_not_train_fails(mutated, code):
    proc, rules = mutated[0]["freeze-good"]
    r = rules[code]
    assert r["runtime_verdict"] == "GOOD FAILS", (r["runtime_verdict"], r["note"])
    assert r["verdict"] == "GOOD FAILS"  # the pairing still holds: the mutation is not a finding
    assert "did not train" in r["note"] or "strayed from its FP32 reference" in r["note"], r["note"]
    assert proc.returncode == 1


RUN_INDEPENDENT = ["AMP101", "AMP105", "AMP900", "AMP901", "AMP103", "AMP902"]


@pytest.mark.parametrize("code", RUN_INDEPENDENT)
def test_the_formerly_run_independent_verdicts_follow_the_runs(mutated, code):
    """NO RUNTIME EFFECT (AMP101/105/900/901), NEEDS CUDA (AMP103), NEEDS DISTRIBUTED (AMP902)
    used to be declared; every one now changes when its fixture is broken."""
    runs = mutated[0]
    assert runs["break-good"][1][code]["verdict"] not in PASSING
    assert runs["freeze-good"][1][code]["verdict"] == "GOOD FAILS"
    assert runs["fix-bad"][1][code]["verdict"] not in PASSING
