"""The runtime harness without torch: spec registry, signs, verdicts, isolation, evidence."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
from helpers import FIXTURES, ROOT

from amplint.runtime import isolate
from amplint.runtime.signs import (
    HARM,
    Identical,
    LossHarm,
    RanksDisagree,
    Raises,
    ScaleAhead,
    ScaledBy,
    ScheduleAhead,
    SchedulerOnSkipped,
    SkippedMore,
    Warns,
    ZeroGrads,
)
from amplint.runtime.spec import MECHANISM_ONLY, NO_RUNTIME_EFFECT, Spec, judge, passes
from amplint.runtime.specs import all_specs
from amplint.runtime.trace import Step, Trace, progress
from amplint.runtime.verify import (
    CONFIRMED,
    GOOD_FAILS,
    NEEDS_CPU_HOST,
    NEEDS_CUDA,
    NEEDS_DISTRIBUTED,
    NOT_REPRODUCED,
    RUN_ERROR,
    RuleResult,
    VerifyRun,
    discover,
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
        assert spec.signs, code
        assert spec.needs in ("", "cuda", "cpu-host", "distributed")
        assert spec.optimizer in ("sgd", "adam", "adam-fused")
        assert spec.expect in (CONFIRMED, MECHANISM_ONLY, NO_RUNTIME_EFFECT)
        assert all(s.kind in ("harm", "mechanism") for s in spec.signs)
        # a rule expected to confirm must be able to: at least one harm sign
        if spec.expect == CONFIRMED:
            assert any(s.kind == HARM for s in spec.signs), code


def test_passing_verdicts():
    from amplint.runtime import verify

    assert set(verify.PASSING) == {"CONFIRMED", "MECHANISM ONLY", "NEEDS CUDA", "NEEDS CPU HOST", "NEEDS DISTRIBUTED",
                                   "NO RUNTIME EFFECT"}
    assert set(verify.VERDICT_HELP) >= set(verify.PASSING)
    numeric, mech, none = Spec("X"), Spec("X", expect=MECHANISM_ONLY), Spec("X", no_effect=True)
    assert passes(numeric, CONFIRMED) and not passes(numeric, MECHANISM_ONLY)
    assert passes(mech, MECHANISM_ONLY) and passes(mech, CONFIRMED)
    assert passes(none, NO_RUNTIME_EFFECT) and not passes(numeric, NO_RUNTIME_EFFECT)
    assert all(passes(numeric, v) for v in (NEEDS_CUDA, NEEDS_CPU_HOST, NEEDS_DISTRIBUTED))
    assert not any(passes(numeric, v) for v in (NOT_REPRODUCED, GOOD_FAILS, RUN_ERROR)) and not passes(None, CONFIRMED)


def test_select_codes():
    codes = ["AMP001", "AMP002", "AMP101", "AMP201"]
    assert select_codes(codes, None) == codes
    assert select_codes(codes, ["ALL"]) == codes
    assert select_codes(codes, ["AMP0"]) == ["AMP001", "AMP002"]
    assert select_codes(codes, ["amp201", "AMP101"]) == ["AMP101", "AMP201"]


# --- synthetic traces --------------------------------------------------------------------------


def _run(loss, scale=1024.0, update=0.05, found_inf=None, **series) -> Trace:
    n = len(loss)
    fi = found_inf or [False] * n
    steps = [Step("scaler", fi[i], 0.0 if fi[i] else update, 1.0, 0.0, False, scale, fi[i], 0.1, 0, float(i))
             for i in range(n)]
    return Trace(status="ok", history={"loss": list(loss), **series}, steps=steps, scales=[scale] * n,
                 updates=list(range(1, n + 1)), scalers=[{"enabled": True, "at": 0, "growth_factor": 2.0}])


def _trained(n=20, start=10.0, rate=0.8, **kw) -> Trace:
    return _run([start * rate**i for i in range(n)], **kw)


def _ref(n=20, start=10.0, rate=0.8, **series) -> Trace:
    t = _run([start * rate**i for i in range(n)], scale=None, **series)
    t.mode = "fp32"
    t.scalers = [{"enabled": False, "at": 0}]
    return t


def _raised(exc_type: str, message: str, steps: int = 1) -> Trace:
    return Trace(status="raised", exception={"type": exc_type, "message": message, "fixture_line": 20,
                                             "step_index": steps},
                 steps=[Step("scaler", True, 0.0, None, None, False, 65536.0, True)] * steps)


def j(spec, bad, good=None, ref=None, device="cpu", env=CPU):
    return judge(spec, bad, good or _trained(), ref if ref is not None else _ref(), device, env)


# --- exceptions, the twin ------------------------------------------------------------------------


def test_raises_and_the_twin():
    spec = Spec("AMP001", (Raises(("RuntimeError", "step() has already been called"),
                                  ("RuntimeError", "unscale_() is being called after step()")),))
    out = j(spec, _raised("RuntimeError", "step() has already been called since the last update()."))
    assert out.verdict == CONFIRMED and "RuntimeError" in out.lead.sentence
    assert j(spec, _raised("RuntimeError", "unscale_() is being called after step().")).verdict == CONFIRMED
    # the wrong exception is not the failure mode, and says so
    out = j(spec, _raised("AssertionError", "No inf checks"))
    assert out.verdict == NOT_REPRODUCED and "not a documented variant" in out.note
    # a twin that raises, does not train, or strays from FP32 fails the verification
    bad = _raised("RuntimeError", "step() has already been called")
    assert j(spec, bad, _raised("RuntimeError", "step() has already been called")).verdict == GOOD_FAILS
    flat = j(spec, bad, _run([10.0] * 20))
    assert flat.verdict == GOOD_FAILS and "did not train" in flat.note
    # loss 10 -> 9 in the twin vs 10 -> 0.1 in FP32: 0.02x of FP32's log-progress
    slow = j(spec, bad, _trained(rate=0.99, start=10.0, n=20), _ref(rate=0.78))
    assert slow.verdict == GOOD_FAILS and "did not train" in slow.note
    lagging = j(spec, bad, _trained(rate=0.9), _ref(rate=0.6))
    assert lagging.verdict == GOOD_FAILS and "strayed from its FP32 reference" in lagging.note
    broken_ref = j(spec, bad, _trained(), _raised("RuntimeError", "x"))
    assert broken_ref.verdict == GOOD_FAILS and "FP32 reference" in broken_ref.note


def test_a_twin_showing_the_failure_against_fp32_fails():
    spec = Spec("AMP015", (ScaledBy("series", +1, kind=HARM),))
    twin = _trained(scale=4096.0)
    twin.history["loss"] = [v * 4096.0 for v in twin.history["loss"]]  # the twin logs the scaled loss too
    out = j(spec, _trained(scale=4096.0), twin, _ref())
    assert out.verdict == GOOD_FAILS and "against its FP32 reference" in out.note


def test_harness_errors():
    spec = Spec("AMP001", (Raises(("RuntimeError", "step()")),))
    assert j(spec, Trace(status="crashed", detail="killed by signal 11")).verdict == RUN_ERROR
    assert j(spec, _raised("RuntimeError", "step()"), Trace(status="timeout")).verdict == RUN_ERROR
    assert j(spec, _raised("RuntimeError", "step()"), _trained(), Trace(status="error")).verdict == RUN_ERROR


# --- the loss --------------------------------------------------------------------------------------


def test_loss_harm_is_relative_to_the_twin_and_direction_aware():
    spec = Spec("X", (LossHarm(),))
    # a stalled loss on a slow problem (a CNN: 2.3 -> 1.0 in the twin, 2.3 -> 2.2 here): shown
    slow_twin = _run([2.3 * (1.0 / 2.3) ** (i / 19) for i in range(20)])
    ref = _run(list(slow_twin.history["loss"]), scale=None)
    assert j(spec, _run([2.3 - 0.005 * i for i in range(20)]), slow_twin, ref).verdict == CONFIRMED
    # better than the twin: never harm
    assert j(spec, _trained(rate=0.7), _trained(rate=0.8)).verdict == NOT_REPRODUCED
    # non-finite: harm
    out = j(spec, _run([10.0, 5.0, math.nan] + [math.nan] * 17))
    assert out.verdict == CONFIRMED and "non-finite" in out.lead.sentence
    # 2x worse, but the twin itself is 3x off FP32: within AMP's own noise, not harm
    twin = _trained(rate=0.8)
    bad = _run([v * 2 if i > 15 else v for i, v in enumerate(twin.history["loss"])])
    far_ref = _run([v / 3 if i > 15 else v for i, v in enumerate(twin.history["loss"])], scale=None)
    assert j(replace(spec, fp32_band=(0.01, 100)), bad, twin, far_ref).verdict == NOT_REPRODUCED
    assert j(spec, bad, twin, _run(list(twin.history["loss"]), scale=None)).verdict == CONFIRMED


def test_progress():
    assert progress(10.0, 5.0) == pytest.approx(math.log(2))
    assert progress(10.0, math.inf) == -math.inf
    assert progress(-1.0, -2.0) == pytest.approx(1.0)  # negative losses: relative drop


# --- powers of the scale ------------------------------------------------------------------------------


def test_scaled_series_exact_powers_and_direction():
    spec = Spec("AMP010", (ScaledBy("series", +1, powers=(1, 2), kind=HARM),))
    good = _trained(scale=1024.0, penalty=[5.0, 4.0])
    for factor, verdict in ((1024.0, CONFIRMED), (1024.0**2, CONFIRMED), (1000.0, NOT_REPRODUCED),
                            (1 / 1024.0, NOT_REPRODUCED)):
        bad = _trained(scale=1024.0, penalty=[5.0 * factor, 4.0 * factor])
        out = j(spec, bad, good)
        assert out.verdict == verdict, factor
    out = j(spec, _trained(scale=1024.0, penalty=[5.0 * 1024**2, 1.0]), good)
    assert out.lead.values["power"] == 2 and "1024^2" in out.lead.observable


def test_scale_series_themselves_are_not_metrics():
    """A returned ``scale`` series is the scale, not a metric inflated by it."""
    spec = Spec("X", (ScaledBy("series", +1, kind=HARM),))
    bad = _trained(scale=4096.0, scale_series=[4096.0] * 20)
    good = _trained(scale=4096.0, scale_series=[1.0] * 20)
    bad.history["scale"] = bad.history.pop("scale_series")
    good.history["scale"] = good.history.pop("scale_series")
    assert j(spec, bad, good).verdict == NOT_REPRODUCED


def test_scaled_update_is_a_mechanism_within_10x():
    spec = Spec("AMP002", (LossHarm(), ScaledBy("update", -1)))
    bad = _trained(scale=8192.0, update=0.05 / 8192 * 3)  # 3x off 1/scale: still within 10x
    out = j(spec, bad)
    assert out.verdict == MECHANISM_ONLY and "loss" in out.note
    assert j(spec, _trained(scale=8192.0, update=0.05 / 100)).verdict == NOT_REPRODUCED


# --- skipped steps, scale, schedule, ranks --------------------------------------------------------------


def test_skipped_steps_come_from_the_scalers_found_inf():
    spec = Spec("AMP008", (SkippedMore(),))
    bad = _trained(found_inf=[True] * 20)
    assert j(spec, bad).verdict == CONFIRMED
    unchanged = _trained()
    for s in unchanged.steps:
        s.unchanged = True  # parameters did not move, but no inf was found: not a skipped step
    assert j(spec, unchanged).verdict == NOT_REPRODUCED


def test_scale_ahead_is_direction_aware():
    spec = Spec("AMP007", (ScaleAhead(),))
    assert j(spec, _trained(scale=65536.0), _trained(scale=1024.0)).verdict == CONFIRMED
    assert j(spec, _trained(scale=16.0), _trained(scale=1024.0)).verdict == NOT_REPRODUCED  # lower: not this


def test_schedule_ahead_and_scheduler_on_skipped_steps():
    spec = Spec("AMP903", (ScheduleAhead(), SchedulerOnSkipped()))
    fi = [True] * 5 + [False] * 15
    bad, good = _trained(found_inf=fi), _trained(found_inf=fi)
    bad.sched = [{"at": i + 1, "after_skip": fi[i]} for i in range(20)]
    good.sched = [{"at": i + 1, "after_skip": False} for i in range(5, 20)]
    for i, s in enumerate(bad.steps):
        s.sched = i
    for i, s in enumerate(good.steps):
        s.sched = max(0, i - 5)
    ref = _ref()  # FP32 skips nothing: the scheduler steps with every optimizer step
    ref.sched = [{"at": i + 1, "after_skip": False} for i in range(20)]
    for i, s in enumerate(ref.steps):
        s.sched = i
    out = j(spec, bad, good, ref)
    assert out.verdict == CONFIRMED and out.lead.values["lead"] == 5
    assert {e.sign: e.shown for e in out.evidence} == {"schedule-ahead": True, "sched-skipped": True}


def test_ranks_disagree():
    spec = Spec("AMP902", (RanksDisagree(),), world_size=2, needs="distributed")
    bad, good = _trained(), _trained()
    bad.ranks = [_trained(found_inf=[False] * 20), _trained(found_inf=[True] * 20)]
    good.ranks = [_trained(found_inf=[True] * 3 + [False] * 17), _trained(found_inf=[True] * 3 + [False] * 17)]
    out = j(spec, bad, good)
    assert out.verdict == CONFIRMED and out.lead.bad == "0/20 vs 20/20"
    # one process only: NEEDS DISTRIBUTED, after the twin was checked
    assert j(spec, _trained(), _trained()).verdict == NEEDS_DISTRIBUTED
    assert j(spec, _trained(), _run([10.0] * 20)).verdict == GOOD_FAILS


# --- hardware gates and claims -----------------------------------------------------------------------------


def test_hardware_gates_still_check_the_twin():
    cuda_only = Spec("AMP103", (Raises(("RuntimeError", "unsafe to autocast")),), needs="cuda",
                     emulate_cuda_autocast=True)
    assert j(cuda_only, _trained()).verdict == NEEDS_CUDA  # the emulation did not run
    emulated = _raised("RuntimeError", "binary_cross_entropy ... are unsafe to autocast.")
    emulated.emulation = "cuda-autocast"
    assert j(cuda_only, emulated).verdict == CONFIRMED
    assert j(cuda_only, _trained(), _raised("RuntimeError", "x")).verdict == GOOD_FAILS
    host = Spec("AMP016", (LossHarm(), ZeroGrads()), needs="cpu-host")
    on_cuda_host = {**CPU, "cuda_available": True}
    assert j(host, _trained(), env=on_cuda_host).verdict == NEEDS_CPU_HOST  # the bad scaler was enabled
    disabled = _trained()
    disabled.scalers = [{"enabled": False, "at": 0}]
    assert j(host, disabled, env=on_cuda_host).verdict == NOT_REPRODUCED  # disabled after all: judged
    numeric = Spec("AMP001", (Raises(("RuntimeError", "step()")),))
    assert j(numeric, _trained(), env={"fp16_cpu_autocast": False}).verdict == NEEDS_CUDA


def test_no_effect_claims_are_measured_and_mechanism_only():
    no_effect = Spec("AMP900", (Identical(),), no_effect=True, expect=NO_RUNTIME_EFFECT)
    assert j(no_effect, _trained(), _trained()).verdict == NO_RUNTIME_EFFECT
    out = j(no_effect, _trained(rate=0.79), _trained())
    assert out.verdict == NOT_REPRODUCED and "not identical" in out.note
    warn = Spec("AMP101", (Warns("FutureWarning", "is deprecated"),), expect=MECHANISM_ONLY)
    bad = _trained()
    bad.warnings = [{"category": "FutureWarning", "message": "`torch.cuda.amp.autocast(args...)` is deprecated",
                     "filename": "x.py", "lineno": 1, "count": 3}]
    assert j(warn, bad).verdict == MECHANISM_ONLY
    assert j(warn, _trained()).verdict == NOT_REPRODUCED  # warnings fixed (or silenced): not reproduced


def test_trace_roundtrip():
    t = _trained(val_loss=[1.0])
    t.scaled = [(1.0, 2.0)]
    t.ranks = [_trained(), _trained()]
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
        RuleResult("AMP001", "step-without-update", CONFIRMED, CONFIRMED, evidence_line="Confirmed: x", passing=True),
        RuleResult("AMP103", "bce-under-autocast", NEEDS_CUDA, NEEDS_CUDA, evidence_line="Needs CUDA: y",
                   passing=True),
        RuleResult("AMP002", "grad-use-before-unscale", NOT_REPRODUCED, NOT_REPRODUCED, passing=False),
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
    assert "needs PyTorch" in proc.stderr
    # honest about where it can come from: this interpreter's pip, a checkout, a wheel
    assert f"{sys.executable} -m pip install torch" in proc.stderr
    assert "pip install -e '.[runtime]'" in proc.stderr and ".whl[runtime]" in proc.stderr


def test_runtime_cli_module_does_not_import_torch():
    code = ("import sys, amplint.runtime.cli, amplint.runtime.verify, amplint.runtime.report, amplint.runtime.bench, "
            "amplint.runtime.usercode, amplint.runtime.signs, amplint.runtime.specs as s; s.all_specs(); "
            "sys.exit(1 if 'torch' in sys.modules else 0)")
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


def test_user_code_lines_map_back_to_the_users_file():
    from amplint.runtime.usercode import original_line

    original = "a\nb\nc\nd\n"
    variant = "a\nb\ninserted\nc\nd\n"
    assert [original_line(variant, original, n) for n in (1, 2, 4, 5)] == [1, 2, 3, 4]
    assert original_line(variant, original, 3) == 3  # an inserted line: the line it was inserted before
