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

PASSING = {"CONFIRMED", "MECHANISM ONLY", "NEEDS CUDA", "NEEDS CPU HOST", "NEEDS DISTRIBUTED", "NO RUNTIME EFFECT"}
# the verdict each rule reaches on a CPU host; every other rule is CONFIRMED
EXPECTED = {"AMP101": "MECHANISM ONLY", "AMP105": "MECHANISM ONLY", "AMP900": "NO RUNTIME EFFECT"}


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


def _rules(data):
    return {r["code"]: r for r in data["rules"]}


def test_every_rule_reaches_its_verdict_from_the_runs(full_run):
    proc, data, _ = full_run
    env = data["environment"]
    got = {r["code"]: r["verdict"] for r in data["rules"]}
    want = {code: EXPECTED.get(code, "CONFIRMED") for code in got}
    if env.get("cuda_available"):
        want["AMP016"] = "NEEDS CPU HOST"  # the default-device scaler is enabled where torch sees CUDA
    if not env.get("fp16_cpu_autocast"):
        pytest.skip("this torch has no float16 CPU autocast")
    assert got == want, {c: (got[c], _rules(data)[c]["note"]) for c in got if got[c] != want[c]}
    assert proc.returncode == 0 and data["exit_code"] == 0
    for r in data["rules"]:  # each verdict rests on runs of this invocation: three per rule
        assert set(r["traces"]) == {"bad", "good", "ref"}
        assert r["traces"]["ref"]["mode"] == "fp32" and r["traces"]["good"]["mode"] == "amp"
        assert r["traces"]["good"]["status"] == "ok", r["code"]
        if r["verdict"] == "NEEDS CPU HOST":
            # nothing can show where the default-device scaler is enabled: the verdict rests on
            # that measurement (seen on an H200 with torch 2.11: "1/1 enabled")
            assert not any(s["shown"] for s in r["signs"]) and "enabled" in r["note"], r["note"]
        else:
            assert any(s["shown"] for s in r["signs"]), r["code"]


def test_core_numbers_agree_with_amp_semantics(full_run):
    _, data, _ = full_run
    rules = _rules(data)
    # AMP001: the documented RuntimeError on the second step
    a1 = rules["AMP001"]
    assert a1["traces"]["bad"]["exception"]["type"] == "RuntimeError"
    assert "step() has already been called since the last update()" in a1["traces"]["bad"]["exception"]["message"]
    assert a1["traces"]["bad"]["exception"]["step_index"] == 1
    # AMP002: the clip saw exactly scale x the twin's norm, the SGD update shrank to ~1/scale, the loss stalled
    v2 = {s["sign"]: s for s in rules["AMP002"]["signs"]}
    assert v2["scaled-clip"]["shown"] and v2["scaled-clip"]["values"]["clip_ratio"] == pytest.approx(
        v2["scaled-clip"]["values"]["scale"], rel=0.02)
    assert v2["scaled-update"]["shown"] and v2["loss"]["shown"]
    assert v2["scaled-series"]["values"]["key"] == "grad_norm"  # the logged norm, scale x too large
    # AMP201: the reported metric is exactly scale x the true one
    v201 = rules["AMP201"]["values"]
    assert v201["metric_ratio"] == pytest.approx(v201["scale"], rel=1e-3) and v201["scale"] == 4096
    # AMP007: direction-aware: the buggy loop's scale is the higher one
    assert rules["AMP007"]["values"]["bad_scale"] > rules["AMP007"]["values"]["twin_scale"]
    # AMP902: two gloo ranks, a plain scaler: one rank skips every step, the other none; sharded: in step
    a902 = rules["AMP902"]["traces"]
    bad_ranks = sorted(r["found_inf_steps"] for r in a902["bad"]["ranks"])
    good_ranks = [r["found_inf_steps"] for r in a902["good"]["ranks"]]
    assert len(a902["bad"]["ranks"]) == 2 and bad_ranks[0] == 0 and bad_ranks[1] == a902["bad"]["ranks"][0]["steps"]
    assert good_ranks[0] == good_ranks[1]
    # AMP103: CUDA autocast's own kernel refused binary_cross_entropy on CPU tensors
    a103 = rules["AMP103"]["traces"]["bad"]
    assert a103["emulation"] == "cuda-autocast" and "unsafe to autocast" in a103["exception"]["message"]
    # AMP105: the hand-written backward ran its matmuls in float16 inside the region, float32 outside
    v105 = rules["AMP105"]["values"]
    assert v105["bad_fp32"] == 0 and v105["twin_fp32"] > 0
    # AMP901: bit-identical losses, and the scaler's kernels on every step
    v901 = rules["AMP901"]["values"]
    assert v901["bad_amp_ops"] > v901["twin_amp_ops"] == 0 and v901["max_abs_diff"] == 0
    # AMP903: the schedule ran ahead on the steps actually applied
    assert rules["AMP903"]["values"]["lead"] >= 1


def test_json_schema(full_run):
    _, data, _ = full_run
    assert {"tool", "version", "device", "environment", "seed", "rules", "counts", "exit_code"} <= set(data)
    assert data["device"] == "cpu" and data["environment"]["torch"]
    for r in data["rules"]:
        assert {"code", "name", "verdict", "runtime_verdict", "observable", "bad", "good", "ratio", "evidence",
                "lint", "traces", "values", "signs"} <= set(r)
        for t in r["traces"].values():
            assert {"status", "mode", "steps", "skipped_steps", "found_inf_steps", "scales", "history", "warnings",
                    "exception", "clips", "scheduler_steps", "ranks"} <= set(t)
        for e in r["signs"]:
            assert {"sign", "kind", "shown", "sentence"} <= set(e) and e["kind"] in ("harm", "mechanism")


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
    assert "step() has already been called" in rules["AMP001"]["note"]
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
