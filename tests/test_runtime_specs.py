"""The runtime harness without torch: spec registry, predicates, verdicts, isolation, evidence."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import FIXTURES, ROOT

from amplint.runtime import isolate
from amplint.runtime.spec import (
    NEEDS_CUDA_EFFECT,
    NO_EFFECT,
    Spec,
    identical,
    metric_scaled,
    raises,
    update_ratio,
)
from amplint.runtime.specs import all_specs
from amplint.runtime.trace import Step, Trace
from amplint.runtime.verify import (
    CONFIRMED,
    GOOD_FAILS,
    NEEDS_CUDA,
    NO_RUNTIME_EFFECT,
    NOT_REPRODUCED,
    RUN_ERROR,
    RuleResult,
    VerifyRun,
    discover,
    judge,
    select_codes,
)

CPU = {"torch": "x", "fp16_cpu_autocast": True}


def test_every_fixture_pair_has_a_runtime_spec():
    """Rules with fixtures but no ``amplint/runtime/specs/<code>.py`` (verify reports NO SPEC)."""
    missing = sorted(set(discover(FIXTURES)) - set(all_specs()))
    assert not missing, f"fixtures without a runtime spec (add amplint/runtime/specs/<code>.py): {missing}"


def test_specs_are_well_formed():
    specs = all_specs()
    assert {"AMP001", "AMP002", "AMP201"} <= set(specs)
    for code, spec in specs.items():
        assert spec.code == code
        assert callable(spec.check)
        assert spec.effect in ("numeric", "cuda", "no-cuda-host", "distributed", "none")
        assert spec.optimizer in ("sgd", "adam", "adam-fused")


def test_passing_verdicts():
    from amplint.runtime import verify

    assert set(verify.PASSING) == {"CONFIRMED", "NEEDS CUDA", "NEEDS CPU HOST", "NEEDS DISTRIBUTED",
                                   "NO RUNTIME EFFECT"}
    assert set(verify.VERDICT_HELP) >= set(verify.PASSING)


def test_select_codes():
    codes = ["AMP001", "AMP002", "AMP101", "AMP201"]
    assert select_codes(codes, None) == codes
    assert select_codes(codes, ["ALL"]) == codes
    assert select_codes(codes, ["AMP0"]) == ["AMP001", "AMP002"]
    assert select_codes(codes, ["amp201", "AMP101"]) == ["AMP101", "AMP201"]


def _trained(n: int = 20, scale: float = 1024.0, update: float = 0.05, **kw) -> Trace:
    loss = [10.0 * 0.8**i for i in range(n)]
    steps = [Step("scaler", False, update, 1.0, 0.0, False, scale) for _ in range(n)]
    return Trace(status="ok", history={"loss": loss, **kw}, steps=steps, scales=[scale] * n, scalers=[True])


def _raised(exc_type: str, message: str, steps: int = 1) -> Trace:
    return Trace(status="raised", exception={"type": exc_type, "message": message, "fixture_line": 20,
                                             "step_index": steps},
                 steps=[Step("scaler", True, 0.0, None, None, False, 65536.0)] * steps)


def test_raises_predicate_and_verdicts():
    spec = Spec("AMP001", raises("RuntimeError", "step() has already been called"))
    bad = _raised("RuntimeError", "step() has already been called since the last update().")
    good = _trained()
    verdict, m, _ = judge(spec, bad, good, "cpu", CPU)
    assert verdict == CONFIRMED
    assert "RuntimeError" in m.sentence and "20 steps" in m.sentence
    # the wrong exception is not the failure mode
    verdict, _, note = judge(spec, _raised("AssertionError", "No inf checks"), good, "cpu", CPU)
    assert verdict == NOT_REPRODUCED and "expected RuntimeError" in note
    # good.py raising the same error: the fix does not fix
    verdict, _, _ = judge(spec, bad, _raised("RuntimeError", "step() has already been called"), "cpu", CPU)
    assert verdict == GOOD_FAILS


def test_update_ratio_predicate():
    spec = Spec("AMP002", update_ratio(1e-2))
    bad = _trained(scale=8192.0, update=0.05 / 8192)
    bad.history["loss"] = [10.0] * 20  # does not train
    verdict, m, _ = judge(spec, bad, _trained(scale=8192.0), "cpu", CPU)
    assert verdict == CONFIRMED
    assert math.isclose(m.ratio, 1 / 8192) and math.isclose(m.values["ratio_over_inv_scale"], 1.0)
    verdict, _, _ = judge(spec, _trained(), _trained(), "cpu", CPU)
    assert verdict == NOT_REPRODUCED


def test_metric_scaled_predicate():
    spec = Spec("AMP201", metric_scaled("val_loss"))
    good = _trained(scale=4096.0, val_loss=[0.5, 0.25])
    bad = _trained(scale=4096.0, val_loss=[0.5 * 4096, 0.25 * 4096])
    verdict, m, _ = judge(spec, bad, good, "cpu", CPU)
    assert verdict == CONFIRMED and m.ratio == 4096.0 and m.values["scale"] == 4096.0
    # inflated, but not by a scale the run used: not this failure mode
    odd = _trained(scale=4096.0, val_loss=[0.5 * 1000, 0.25 * 1000])
    assert judge(spec, odd, good, "cpu", CPU)[0] == NOT_REPRODUCED


def test_needs_cuda_no_effect_and_errors():
    cuda_only = Spec("AMP103", raises("RuntimeError", "unsafe to autocast"), effect=NEEDS_CUDA_EFFECT)
    good = _trained()
    assert judge(cuda_only, _trained(), good, "cpu", CPU)[0] == NEEDS_CUDA
    assert judge(cuda_only, _trained(), good, "cuda", CPU)[0] == NOT_REPRODUCED
    no_effect = Spec("AMP105", identical("loss"), effect=NO_EFFECT)
    verdict, m, _ = judge(no_effect, _trained(), _trained(), "cpu", CPU)
    assert verdict == NO_RUNTIME_EFFECT and "bit-identical" in m.sentence
    assert judge(no_effect, _trained(), _raised("RuntimeError", "x"), "cpu", CPU)[0] == GOOD_FAILS
    numeric = Spec("AMP001", raises("RuntimeError", "step()"))
    crashed = Trace(status="crashed", detail="killed by signal 11")
    assert judge(numeric, crashed, good, "cpu", CPU)[0] == RUN_ERROR
    assert judge(numeric, _raised("RuntimeError", "step()"), Trace(status="timeout"), "cpu", CPU)[0] == RUN_ERROR
    # no fp16 CPU autocast in this torch: cannot be shown on CPU
    no_fp16 = {"fp16_cpu_autocast": False}
    assert judge(numeric, _raised("RuntimeError", "step()"), good, "cpu", no_fp16)[0] == NEEDS_CUDA


def test_trace_roundtrip():
    t = _trained(val_loss=[1.0])
    t.scaled = [(1.0, 2.0)]
    back = Trace.from_dict(json.loads(json.dumps(t.to_dict())))
    assert back == t


# --- isolation (fork, deadline, crash) -----------------------------------------------------


def _sleep_forever():
    while True:
        time.sleep(1)


def _die():
    os._exit(3)


def _boom():
    raise ValueError("own error")


def _answer(x):
    return {"x": x * 2}


def test_isolation_records_timeouts_crashes_and_errors():
    jobs = [isolate.Job("hang", _sleep_forever, timeout=1.0), isolate.Job("die", _die), isolate.Job("boom", _boom),
            isolate.Job("ok", _answer, (21,))]
    t0 = time.monotonic()
    seen = []
    out = isolate.run_jobs(jobs, parallel=2, on_done=lambda o: seen.append(o.key))
    assert time.monotonic() - t0 < 20
    assert out["hang"].status == "timeout"
    assert out["die"].status == "crashed" and "status 3" in out["die"].detail
    assert out["boom"].status == "error" and "own error" in out["boom"].detail
    assert out["ok"].status == "ok" and out["ok"].value == {"x": 42}
    assert sorted(seen) == sorted(["hang", "die", "boom", "ok"])


# --- evidence file ---------------------------------------------------------------------------


def test_update_evidence_merges_and_keeps_cuda_lines(tmp_path):
    from amplint.runtime.report import update_evidence

    path = tmp_path / "evidence.json"
    path.write_text(json.dumps({"rules": {"AMP103": "cuda line", "AMP900": "old"},
                                "measured": {"AMP103": {"device": "cuda", "verdict": "CONFIRMED"}}}))
    results = [
        RuleResult("AMP001", "step-without-update", CONFIRMED, CONFIRMED, evidence_line="Confirmed: x"),
        RuleResult("AMP103", "bce-under-autocast", NEEDS_CUDA, NEEDS_CUDA, evidence_line="Needs CUDA: y"),
        RuleResult("AMP002", "grad-use-before-unscale", NOT_REPRODUCED, NOT_REPRODUCED),
    ]
    run = VerifyRun("cpu", {"torch": "2.13.0"}, 0, FIXTURES, results)
    assert run.exit_code == 1
    written = update_evidence(run, path)
    data = json.loads(path.read_text())
    assert written == ["AMP001"]
    assert data["rules"] == {"AMP001": "Confirmed: x", "AMP103": "cuda line", "AMP900": "old"}


# --- without torch ---------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["verify", "bench"])
def test_without_torch_exit_2_with_a_clear_message(command):
    code = ("import sys; sys.modules['torch'] = None\n"
            "from amplint.cli import main\n"
            # an option of the command: the checkout has a bench/ folder, which a bare `bench` would lint
            f"main(['{command}', '--device', 'cpu'], prog_name='amplint')\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "needs PyTorch" in proc.stderr and "amplint[runtime]" in proc.stderr


def test_runtime_cli_module_does_not_import_torch():
    code = "import sys, amplint.runtime.cli, amplint.runtime.verify, amplint.runtime.report, amplint.runtime.bench, " \
           "amplint.runtime.specs as s; s.all_specs(); sys.exit(1 if 'torch' in sys.modules else 0)"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_default_fixtures_dir_is_the_checkouts(tmp_path, monkeypatch):
    from amplint.runtime.verify import default_fixtures_dir

    monkeypatch.chdir(tmp_path)
    assert default_fixtures_dir().resolve() == Path(FIXTURES).resolve()


def test_fixtures_in_the_current_directory_are_never_run_by_default(tmp_path, monkeypatch):
    """verify executes what it finds: only the project's own fixtures, or --fixtures DIR."""
    from amplint.runtime.verify import default_fixtures_dir

    planted = tmp_path / "fixtures" / "AMP001"
    planted.mkdir(parents=True)
    for name in ("bad.py", "good.py"):
        (planted / name).write_text("raise SystemExit('must not run')\n")
    monkeypatch.chdir(tmp_path)
    assert default_fixtures_dir().resolve() == Path(FIXTURES).resolve()
