"""`amplint verify` end to end on CPU: verdicts, numbers, outputs, broken fixtures, isolation."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import FIXTURES, ROOT

HAS_TORCH = importlib.util.find_spec("torch") is not None
HAS_MPL = importlib.util.find_spec("matplotlib") is not None
pytestmark = [pytest.mark.runtime, pytest.mark.skipif(not HAS_TORCH, reason="needs torch (the runtime extra)")]

PASSING = {"CONFIRMED", "NEEDS CUDA", "NEEDS CPU HOST", "NEEDS DISTRIBUTED", "NO RUNTIME EFFECT"}


def verify(*args: str, cwd: Path = ROOT, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "amplint", "verify", "--device", "cpu", *args],
                          capture_output=True, text=True, cwd=cwd, timeout=timeout)


@pytest.fixture(scope="module")
def full_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("verify")
    args = ["--json", str(out / "v.json"), "--report", str(out / "r.md")]
    if HAS_MPL:
        args += ["--plots", str(out / "plots")]
    proc = verify(*args)
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    data = json.loads((out / "v.json").read_text())
    return proc, data, out


def test_every_rule_with_a_spec_passes(full_run):
    _, data, _ = full_run
    failing = {r["code"]: (r["verdict"], r["note"], r["lint"]["detail"]) for r in data["rules"]
               if r["verdict"] not in PASSING and r["verdict"] != "NO SPEC"}
    assert not failing, failing
    for r in data["rules"]:
        if r["spec"] and r["spec"]["effect"] == "numeric" and data["environment"]["fp16_cpu_autocast"]:
            assert r["verdict"] == "CONFIRMED", r


def test_exit_code_follows_the_verdicts(full_run):
    proc, data, _ = full_run
    all_pass = all(r["verdict"] in PASSING for r in data["rules"])
    assert proc.returncode == (0 if all_pass else 1)
    assert data["exit_code"] == proc.returncode


def test_core_numbers_agree_with_amp_semantics(full_run):
    _, data, _ = full_run
    rules = {r["code"]: r for r in data["rules"]}
    # AMP001: the documented RuntimeError on the second step
    a1 = rules["AMP001"]
    assert a1["traces"]["bad"]["exception"]["type"] == "RuntimeError"
    assert "step() has already been called since the last update()" in a1["traces"]["bad"]["exception"]["message"]
    assert a1["traces"]["bad"]["exception"]["step_index"] == 1
    assert a1["traces"]["good"]["status"] == "ok"
    # AMP002: the SGD update shrinks to ~1/scale (within 10x) and the loss does not move
    v2 = rules["AMP002"]["values"]
    assert 0.1 < v2["ratio_over_inv_scale"] < 10, v2
    assert v2["loss_ratio"] > 10
    # AMP201: the reported metric is exactly scale x the true one
    v201 = rules["AMP201"]["values"]
    assert v201["metric_ratio"] == pytest.approx(v201["scale"], rel=1e-3)
    assert v201["scale"] == 4096


def test_json_schema(full_run):
    _, data, _ = full_run
    assert {"tool", "version", "device", "environment", "seed", "rules", "counts", "exit_code"} <= set(data)
    assert data["device"] == "cpu" and data["environment"]["torch"]
    for r in data["rules"]:
        assert {"code", "name", "verdict", "runtime_verdict", "observable", "bad", "good", "ratio", "evidence",
                "lint", "traces", "values"} <= set(r)
        for t in r["traces"].values():
            assert {"status", "steps", "skipped_steps", "scales", "history", "warnings", "exception"} <= set(t)


def test_terminal_report_and_plots(full_run):
    proc, data, out = full_run
    header = proc.stdout.splitlines()[0].split()
    assert header == ["rule", "verdict", "observable", "bad", "good", "ratio"]
    assert "amplint verify:" in proc.stdout.splitlines()[-1]
    n = len(data["rules"])
    assert f"[1/{n}]" in proc.stderr or f"/{n}]" in proc.stderr
    report = (out / "r.md").read_text()
    assert "| Rule | Verdict | Observable | bad.py | good.py | Ratio |" in report
    for r in data["rules"]:
        assert f"## {r['code']}" in report
    if HAS_MPL:
        for r in data["rules"]:
            if r["traces"]:
                assert (out / "plots" / f"{r['code']}.png").stat().st_size > 1000


def _copy(codes, dest: Path) -> Path:
    dest.mkdir()
    for c in codes:
        shutil.copytree(FIXTURES / c, dest / c)
    return dest


HANG = '''
import time


def train(model, optimizer, batches, device):
    while True:
        time.sleep(0.05)
'''

CRASH = '''
import os
import signal


def train(model, optimizer, batches, device):
    os.kill(os.getpid(), signal.SIGSEGV)
'''


@pytest.fixture(scope="module")
def broken_run(tmp_path_factory):
    """One run over copied fixtures, four of them broken in different ways, one untouched."""
    tmp = tmp_path_factory.mktemp("broken")
    fx = _copy(["AMP001", "AMP002", "AMP012", "AMP015", "AMP201"], tmp / "fixtures")
    good1 = fx / "AMP001" / "good.py"
    text = good1.read_text()
    assert "        scaler.update()\n" in text
    good1.write_text(text.replace("        scaler.update()\n", "", 1))  # the fix, undone
    bad2 = fx / "AMP002" / "bad.py"
    text = bad2.read_text()
    assert "            norm = clip_grad_norm_(" in text
    bad2.write_text(text.replace("            norm = clip_grad_norm_(",
                                 "            scaler.unscale_(optimizer)\n            norm = clip_grad_norm_(", 1))
    (fx / "AMP201" / "bad.py").write_text(HANG)
    (fx / "AMP012" / "good.py").write_text(CRASH)
    proc = verify("--fixtures", str(fx), "--timeout", "4", "--json", str(tmp / "v.json"))
    rules = {r["code"]: r for r in json.loads((tmp / "v.json").read_text())["rules"]}
    return proc, rules


def test_breaking_a_good_fixture_is_a_failure(broken_run):
    proc, rules = broken_run
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert rules["AMP001"]["runtime_verdict"] == "GOOD FAILS"
    assert rules["AMP001"]["verdict"] == "LINT MISMATCH"  # good.py now has the finding too


def test_fixing_a_bad_fixture_is_a_failure(broken_run):
    _, rules = broken_run
    assert rules["AMP002"]["runtime_verdict"] == "NOT REPRODUCED"
    assert rules["AMP002"]["verdict"] == "LINT MISMATCH"  # bad.py no longer has it


def test_a_hanging_or_crashing_fixture_does_not_stop_the_others(broken_run):
    _, rules = broken_run
    assert rules["AMP201"]["runtime_verdict"] == "ERROR"
    assert rules["AMP201"]["traces"]["bad"]["status"] == "timeout"
    assert rules["AMP012"]["runtime_verdict"] == "ERROR"
    assert rules["AMP012"]["traces"]["good"]["status"] == "crashed"
    assert "signal 11" in rules["AMP012"]["traces"]["good"]["detail"]
    assert rules["AMP015"]["verdict"] == "CONFIRMED"  # the untouched copy still passes


def test_select_and_no_spec(tmp_path):
    fx = _copy(["AMP001"], tmp_path / "fixtures")
    shutil.copytree(FIXTURES / "AMP001", fx / "AMP998")  # fixtures, but no spec and no rule
    proc = verify("--fixtures", str(fx), "--select", "AMP998", "--json", str(tmp_path / "v.json"))
    assert proc.returncode == 1
    (r,) = json.loads((tmp_path / "v.json").read_text())["rules"]
    assert r["code"] == "AMP998" and r["runtime_verdict"] == "NO SPEC"
    proc = verify("--fixtures", str(fx), "--select", "AMP7")
    assert proc.returncode == 2 and "no fixture pair matches" in proc.stderr
