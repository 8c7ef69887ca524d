"""`amplint bench`: the recommendation rules and report schema (no timings are asserted)."""

from __future__ import annotations

import importlib.util
import json
import math
import subprocess
import sys

import pytest
from helpers import ROOT

from amplint.runtime import bench as B

HAS_TORCH = importlib.util.find_spec("torch") is not None
HAS_MPL = importlib.util.find_spec("matplotlib") is not None
needs_torch = [pytest.mark.runtime, pytest.mark.skipif(not HAS_TORCH, reason="needs torch (the runtime extra)")]

TINY = '''
import torch


def build():
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.BatchNorm2d(4), torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(4, 10),
    )


def batch(batch_size):
    g = torch.Generator().manual_seed(3)
    return torch.randn(batch_size, 3, 8, 8, generator=g), torch.randint(0, 10, (batch_size,), generator=g)


class DictNet(torch.nn.Module):
    """Returns a dict, as Hugging Face style models do."""

    def __init__(self):
        super().__init__()
        self.body = build()

    def forward(self, x):
        return {"hidden": x.mean(), "logits": self.body(x)}


class TupleNet(DictNet):
    def forward(self, x):
        out = super().forward(x)
        return out["logits"], out["hidden"]


def build_dict():
    return DictNet()


def build_tuple():
    return TupleNet()


def double_ce(out, target):
    return 2.0 * torch.nn.functional.cross_entropy(out.float(), target)


def rmsprop(params):
    return torch.optim.RMSprop(params, lr=1e-3)
'''


def result(median: float, loss: float = 1.0, mem: int = 100 << 20, **kw):
    return {"status": "ok", "median_s": median, "p25_s": median, "p75_s": median, "images_per_s": 32 / median,
            "peak_mem_bytes": mem, "final_loss": loss, "total_steps": 25, "steps_timed": 20,
            "skipped_steps": kw.pop("skipped", None), "final_scale": kw.pop("scale", None), **kw}


GPU = {"bf16_supported": True, "tf32_matmul": True}


# --- pure logic ------------------------------------------------------------------------------


def test_recommends_bf16_when_it_is_fast_and_supported():
    res = {"fp32": result(0.10), "fp16": result(0.05, skipped=1, scale=32768.0), "bf16": result(0.052, mem=60 << 20)}
    rec = B.recommend(res, GPU, "cuda")
    assert rec["mode"] == "bf16"
    assert "1.92x" in rec["text"] and "no loss scaling" in rec["text"]
    assert rec["flags"] == []


def test_recommends_fp16_without_bf16_support():
    res = {"fp32": result(0.10), "fp16": result(0.05), "bf16": {"status": "unsupported",
                                                                  "error": "this GPU does not support bfloat16"}}
    rec = B.recommend(res, {"bf16_supported": False, "tf32_matmul": True}, "cuda")
    assert rec["mode"] == "fp16" and "GradScaler" in rec["text"]
    assert any("bf16 did not run" in f for f in rec["flags"])
    assert any("no bfloat16 support" in f for f in rec["flags"])


def test_flags_amp_slower_than_fp32_and_stays_fp32():
    res = {"fp32": result(1.0), "fp16": result(8.0), "bf16": result(1.05)}
    rec = B.recommend(res, {}, "cpu")
    assert rec["mode"] == "fp32" and rec["text"].startswith("Stay with FP32")
    assert any(f.startswith("fp16 is slower than FP32 (0.12x)") for f in rec["flags"])
    assert not any(f.startswith("bf16 is slower") for f in rec["flags"])  # 0.95x is "about the same"


def test_flags_numerics_and_skipped_steps():
    res = {"fp32": result(0.1, loss=1.0), "fp16": result(0.05, loss=1.2, skipped=20, scale=1.0),
           "bf16": result(0.05, loss=float("nan"))}
    rec = B.recommend(res, GPU, "cuda")
    # fp16 is 2x faster, but off FP32's loss by 20%; bf16's loss is not finite: neither is recommended
    assert rec["mode"] == "fp32" and rec["text"].startswith("Stay with FP32")
    assert "fp16 was not recommended: its loss differs from FP32's by 20.0%" in rec["text"]
    flags = " | ".join(rec["flags"])
    assert "the loss differs from FP32's by 20.0% after 25 steps, beyond the tolerance of 5.0%" in flags
    assert "bf16: the final loss is not finite" in flags
    # the skipped-step check: fp16 within the loss tolerance, but the scaler skipped 20 of 25 steps
    res["fp16"]["final_loss"] = 1.01
    rec = B.recommend(res, GPU, "cuda")
    assert rec["mode"] == "fp32" and "20 of 25 steps were skipped" in " | ".join(rec["flags"])


def test_the_loss_tolerance_decides_the_recommendation():
    res = {"fp32": result(0.10, loss=1.0), "fp16": result(0.05, loss=1.12, skipped=1, scale=32768.0),
           "bf16": result(0.07, loss=1.01)}
    rec = B.recommend(res, GPU, "cuda")
    assert rec["mode"] == "bf16"  # fp16 is faster, but 12% off FP32's loss
    assert "fp16 was not recommended" in rec["text"]
    assert B.recommend(res, GPU, "cuda", loss_tolerance=0.2)["mode"] == "fp16"
    res["bf16"]["final_loss"] = 1.3
    rec = B.recommend(res, GPU, "cuda")
    assert rec["mode"] == "fp32" and "bf16 was not recommended" in rec["text"]


def test_never_a_mode_that_did_not_run():
    no_fp32 = {"fp16": result(0.05), "bf16": result(0.04)}
    rec = B.recommend(no_fp32, GPU, "cuda")
    assert rec["mode"] is None and "FP32 was not among the modes run" in rec["text"]
    failed = {"fp32": {"status": "error", "error": "out of memory"}, "bf16": result(0.04)}
    rec = B.recommend(failed, GPU, "cuda")
    assert rec["mode"] is None and "FP32 did not run" in rec["text"]
    assert any("fp32 did not run: out of memory" in f for f in rec["flags"])
    import itertools

    for statuses in itertools.product(("ok", "error", None), repeat=3):
        res = {m: result(0.1 / (i + 1)) if st == "ok" else {"status": st, "error": "x"}
               for i, (m, st) in enumerate(zip(B.MODES, statuses)) if st is not None}
        rec = B.recommend(res, GPU, "cuda")
        assert rec["mode"] is None or res[rec["mode"]]["status"] == "ok", (statuses, rec)


def test_steady_state_check():
    res = {"fp32": result(0.1, cv=0.02), "bf16": result(0.05, cv=0.31, drift=0.7)}
    rec = B.recommend(res, GPU, "cuda")
    flags = " | ".join(rec["flags"])
    assert "bf16: step times are not steady (coefficient of variation 31% over 20 timed steps, median 50.0 ms, " \
           "second half 0.70x the first)" in flags
    assert "fp32: step times" not in flags
    stats = B._timing_stats([0.1, 0.1, 0.1, 0.3], 4)
    assert stats["cv"] == pytest.approx(0.5774, rel=1e-3) and stats["drift"] == pytest.approx(2.0)
    assert "cv" in B.render_table(res).splitlines()[0]


def test_compare_and_table():
    res = {"fp32": result(0.2, loss=2.0, mem=200 << 20), "fp16": result(0.1, loss=2.2, mem=100 << 20,
                                                                          skipped=2, scale=16384.0)}
    comp = B.compare(res)
    assert comp["fp16"]["speedup"] == pytest.approx(2.0)
    assert comp["fp16"]["mem_ratio"] == pytest.approx(0.5)
    assert comp["fp16"]["loss_rel_diff"] == pytest.approx(0.1)
    # compared at the same step when one mode ran fewer steps
    res["fp32"]["losses"], res["fp16"]["losses"] = [3.0, 2.5, 2.0], [3.0, 2.75]
    assert B.compare(res)["fp16"]["loss_rel_diff"] == pytest.approx(0.1)
    assert B.compare(res)["fp16"]["loss_compared_at"] == 2
    del res["fp32"]["losses"], res["fp16"]["losses"]
    table = B.render_table(res)
    assert "2.00x" in table and "2 / 16384" in table and "10.0%" in table


def test_parse_options():
    assert B.parse_shape("3,224,224") == (3, 224, 224)
    assert B.parse_modes("bf16, fp32") == ("bf16", "fp32")
    with pytest.raises(ValueError):
        B.parse_shape("3,a")
    with pytest.raises(ValueError):
        B.parse_modes("fp8")
    with pytest.raises(ValueError):
        B.load_object("no_colon")


# --- with torch --------------------------------------------------------------------------------


@pytest.mark.runtime
@pytest.mark.skipif(not HAS_TORCH, reason="needs torch (the runtime extra)")
def test_builtin_resnet18_has_the_standard_shapes():
    from amplint.runtime.resnet import resnet18

    model = resnet18()
    assert sum(p.numel() for p in model.parameters()) == 11_689_512
    assert tuple(model.fc.weight.shape) == (1000, 512)
    assert tuple(model.layer4[0].downsample[0].weight.shape) == (512, 256, 1, 1)


@pytest.mark.runtime
@pytest.mark.skipif(not HAS_TORCH, reason="needs torch (the runtime extra)")
@pytest.mark.parametrize("mode", B.MODES)
def test_run_mode_schema(tmp_path, mode):
    (tmp_path / "tiny.py").write_text(TINY)
    cfg = B.BenchConfig(model=f"{tmp_path / 'tiny.py'}:build", input_shape=(3, 8, 8), batch_size=4, steps=2,
                        warmup=1)
    r = B.run_mode(cfg, mode, "cpu")
    assert r["status"] == "ok", r
    assert r["steps_timed"] == 2 and len(r["step_s"]) == 2 and r["total_steps"] == 3
    assert r["median_s"] > 0 and r["images_per_s"] > 0
    assert math.isfinite(r["final_loss"]) and len(r["losses"]) == 3
    assert r["peak_mem_bytes"] is not None and r["peak_mem_bytes"] >= 0
    if mode == "fp16":
        assert r["final_scale"] > 0 and isinstance(r["skipped_steps"], int)
    else:
        assert r["final_scale"] is None and r["skipped_steps"] is None


@pytest.mark.runtime
@pytest.mark.skipif(not HAS_TORCH, reason="needs torch (the runtime extra)")
def test_bench_cli_tiny_model(tmp_path):
    (tmp_path / "tiny.py").write_text(TINY)
    args = [sys.executable, "-m", "amplint", "bench", "--device", "cpu", "--model", f"{tmp_path / 'tiny.py'}:build",
            "--input", f"{tmp_path / 'tiny.py'}:batch", "--batch-size", "4", "--steps", "2", "--warmup", "1",
            "--json", str(tmp_path / "b.json"), "--report", str(tmp_path / "b.md")]
    if HAS_MPL:
        args += ["--plot", str(tmp_path / "b.png")]
    proc = subprocess.run(args, capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines()[0].split()[:2] == ["mode", "step"]
    assert "Recommendation:" in proc.stdout
    for m in B.MODES:
        assert f"] {m}: median" in proc.stderr
    data = json.loads((tmp_path / "b.json").read_text())
    assert set(data["results"]) == set(B.MODES)
    assert {"mode", "text", "flags"} <= set(data["recommendation"])
    assert data["hardware"]["torch"] and data["device"] == "cpu"
    for m, r in data["results"].items():
        assert {"median_s", "p25_s", "p75_s", "images_per_s", "peak_mem_bytes", "final_loss", "speedup",
                "loss_rel_diff", "mem_ratio"} <= set(r)
    assert "**Recommendation" in (tmp_path / "b.md").read_text()
    if HAS_MPL:
        assert (tmp_path / "b.png").stat().st_size > 1000


def test_bench_usage_errors():
    proc = subprocess.run([sys.executable, "-m", "amplint", "bench", "--modes", "fp8"], capture_output=True,
                          text=True, cwd=ROOT, timeout=60)
    assert proc.returncode == 2 and "--modes" in proc.stderr


@pytest.mark.runtime
@pytest.mark.skipif(not HAS_TORCH, reason="needs torch (the runtime extra)")
def test_select_output():
    import torch

    t = torch.zeros(2, 3)
    assert B.select_output(t) is t
    assert B.select_output({"loss": torch.tensor(1.0), "logits": t}) is t
    assert B.select_output({"hidden": t, "n": 3}) is t
    assert B.select_output((t, torch.ones(1))) is t
    assert B.select_output([torch.ones(1), t], "1") is t
    assert B.select_output({"a": {"logits": t}}, "a") is t
    with pytest.raises(ValueError, match="no 'x'"):
        B.select_output({"logits": t}, "x")
    with pytest.raises(ValueError, match="cannot find a tensor"):
        B.select_output(3)


@pytest.mark.runtime
@pytest.mark.skipif(not HAS_TORCH, reason="needs torch (the runtime extra)")
@pytest.mark.parametrize("factory,extra", [("build_dict", ["--loss", "{tiny}:double_ce", "--optimizer", "{tiny}:rmsprop"]),
                                           ("build_tuple", ["--optimizer", "adamw", "--lr", "0.001", "--loss",
                                                            "cross_entropy"])])
def test_bench_models_returning_dicts_and_tuples_with_configured_loss_and_optimizer(tmp_path, factory, extra):
    tiny = tmp_path / "tiny.py"
    tiny.write_text(TINY)
    args = [sys.executable, "-m", "amplint", "bench", "--device", "cpu", "--model", f"{tiny}:{factory}",
            "--input", f"{tiny}:batch", "--batch-size", "4", "--steps", "3", "--warmup", "1", "--modes", "fp32,bf16",
            "--json", str(tmp_path / "b.json"), *[a.format(tiny=tiny) for a in extra]]
    proc = subprocess.run(args, capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads((tmp_path / "b.json").read_text())
    for m in ("fp32", "bf16"):
        r = data["results"][m]
        assert r["status"] == "ok" and math.isfinite(r["final_loss"]) and r["cv"] is not None
    assert data["config"]["loss"] == extra[extra.index("--loss") + 1].format(tiny=tiny)
    assert data["recommendation"]["mode"] in ("fp32", "bf16")
    if factory == "build_dict":  # the loss function given: twice cross-entropy, about 2 ln 10 at the start
        assert data["results"]["fp32"]["losses"][0] == pytest.approx(2 * math.log(10), rel=0.2)


def test_bench_option_errors():
    for args, text in ((["--loss", "hinge"], "--loss takes one of"), (["--optimizer", "lbfgs"], "--optimizer takes")):
        proc = subprocess.run([sys.executable, "-m", "amplint", "bench", *args], capture_output=True, text=True,
                              cwd=ROOT, timeout=60)
        assert proc.returncode == 2 and text in proc.stderr, proc.stderr
