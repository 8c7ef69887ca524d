"""`amplint verify train.py` on user code: the README's worked example, the hooks, the errors."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ROOT

HAS_TORCH = importlib.util.find_spec("torch") is not None
pytestmark = [pytest.mark.runtime, pytest.mark.skipif(not HAS_TORCH, reason="needs torch (the runtime extra)")]


def amplint(*args: str, cwd: Path = ROOT, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "amplint", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=timeout)


def readme_example() -> list[tuple[list[str], list[tuple[str, int, str]]]]:
    """The commands of the README's worked example and the (code, line, verdict) rows shown for each."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("### On your own training code"):]
    block = section[section.index("```console\n") + len("```console\n"):]
    block = block[: block.index("```")]
    out: list[tuple[list[str], list[tuple[str, int, str]]]] = []
    for line in block.splitlines():
        if line.startswith("$ amplint "):
            out.append((line[len("$ amplint "):].split(), []))
            continue
        m = re.match(r"(AMP\d{3}) \S+ \(lines? (\d+)[^)]*\)\s+(\S+(?: \S+)?)  ", line)
        if m:
            out[-1][1].append((m.group(1), int(m.group(2)), m.group(3)))
    return out


EXAMPLE = readme_example()


def test_the_readme_shows_the_worked_example():
    assert [cmd[1] for cmd, _rows in EXAMPLE] == ["docs/examples/verify/train_cnn.py",
                                                  "docs/examples/verify/train_transformer.py"]
    codes = {code for _cmd, rows in EXAMPLE for code, _line, verdict in rows if verdict == "CONFIRMED"}
    assert {"AMP001", "AMP002", "AMP003", "AMP015", "AMP201"} <= codes


@pytest.mark.parametrize("cmd,rows", EXAMPLE, ids=[c[1].rsplit("/", 1)[-1] for c, _r in EXAMPLE])
def test_readme_worked_example(tmp_path, cmd, rows):
    proc = amplint(*cmd, "--json", str(tmp_path / "u.json"))
    assert proc.returncode == 1, proc.stdout + proc.stderr  # failure modes showed
    got = [(m.group(1), int(m.group(2)), m.group(3)) for m in
           re.finditer(r"^(AMP\d{3}) \S+ \(lines? (\d+)[^)]*\)\s+(\S+(?: \S+)?)  ", proc.stdout, re.MULTILINE)]
    assert got == rows, proc.stdout
    data = json.loads((tmp_path / "u.json").read_text())
    assert data["mode"] == "user-code" and data["exit_code"] == 1
    twin = data["twin"]
    assert twin["good"]["status"] == "ok" and twin["ref"]["mode"] == "fp32"
    for f in data["findings"]:
        assert f["verdict"] == "CONFIRMED", f
        assert any(s["shown"] and s["kind"] == "harm" for s in f["signs"]), f
        assert f["trace"]["status"] in ("ok", "raised")
    # not the built-in MLP: a convolution or an attention block trained here
    assert data["problem"].endswith(":make_problem")


PROBLEM = '''
import torch


def build(device, seed):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed + 1)
    w = torch.randn(8, 1, generator=g)
    batches = []
    for _ in range(30):
        x = torch.randn(16, 8, generator=g)
        batches.append((x.to(device), (x @ w).to(device)))
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.Linear(16, 1)).to(device)
    return model, torch.optim.Adam(model.parameters(), lr=1e-2), batches
'''

LOOP = '''
import torch
import torch.nn.functional as F


def fit(model, optimizer, batches, device):
    scaler = torch.amp.GradScaler(device, init_scale=256.0)
    losses = []
    for x, y in batches:
        optimizer.zero_grad()
        with torch.autocast(device_type=device, dtype=torch.float16):
            loss = F.mse_loss(model(x), y)
        scaled = scaler.scale(loss)
        scaled.backward()
        scaler.step(optimizer)
        scaler.update()
        losses.append(scaled.item())
    return {"loss": losses}
'''


def test_problem_option_entry_and_steps(tmp_path):
    (tmp_path / "problems.py").write_text(PROBLEM)
    (tmp_path / "loop.py").write_text(LOOP)
    proc = amplint("verify", "loop.py", "--device", "cpu", "--problem", "problems.py:build", "--entry", "fit",
                   "--steps", "25", "--json", "u.json", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    data = json.loads((tmp_path / "u.json").read_text())
    (f,) = data["findings"]
    assert f["code"] == "AMP015" and f["verdict"] == "CONFIRMED" and f["values"]["scale"] == 256
    assert len(data["twin"]["good"]["history"]["loss"]) == 25  # --steps bounded the batches
    assert data["problem"] == "problems.py:build"


BUILTIN_ONLY = '''
import torch
import torch.nn.functional as F

from problems import build


def make_problem(device, seed):
    return build(device, seed)


def train(model, optimizer, batches, device):
    scaler = torch.amp.GradScaler(device)
    losses = []
    for x, y in batches:
        optimizer.zero_grad()
        with torch.autocast(device_type=device, dtype=torch.float16):
            loss = F.mse_loss(model(x), y)
            scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        losses.append(loss.item())
    return {"loss": losses}
'''


def test_a_finding_whose_failure_does_not_show_here_is_not_reproduced(tmp_path):
    """Backward inside autocast changes nothing for built-in ops (only hand-written backwards)."""
    (tmp_path / "problems.py").write_text(PROBLEM)
    (tmp_path / "train.py").write_text(BUILTIN_ONLY)
    proc = amplint("verify", "train.py", "--device", "cpu", "--json", "u.json", cwd=tmp_path)
    data = json.loads((tmp_path / "u.json").read_text())
    (f,) = data["findings"]
    assert f["code"] == "AMP105" and f["verdict"] == "NOT REPRODUCED", f
    assert proc.returncode == 0, proc.stdout + proc.stderr


CLOSURE = '''
import torch
import torch.nn.functional as F


def make_problem(device, seed):
    model = torch.nn.Linear(4, 1).to(device)
    return {"model": model, "optimizer": torch.optim.SGD(model.parameters(), lr=0.1),
            "batches": [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(5)]}


def train(model, optimizer, batches, device):
    scaler = torch.amp.GradScaler(device)
    for x, y in batches:
        def closure():
            optimizer.zero_grad()
            with torch.autocast(device_type=device, dtype=torch.float16):
                loss = F.mse_loss(model(x), y)
            scaler.scale(loss).backward()
            return loss
        scaler.step(optimizer, closure=closure)
        scaler.update()
    return {"loss": []}
'''


def test_usage_errors_and_findings_without_a_fix(tmp_path):
    (tmp_path / "closure.py").write_text(CLOSURE)
    proc = amplint("verify", "closure.py", "--device", "cpu", cwd=tmp_path)
    assert proc.returncode == 1 and re.search(r"^AMP011 \S+ \(line \d+\)\s+NO TWIN", proc.stdout, re.M), proc.stdout
    (tmp_path / "noproblem.py").write_text(LOOP)
    proc = amplint("verify", "noproblem.py", cwd=tmp_path)
    assert proc.returncode == 2 and "defines no make_problem(device, seed)" in proc.stderr
    (tmp_path / "broken.py").write_text("def train(:\n")
    proc = amplint("verify", "broken.py", cwd=tmp_path)
    assert proc.returncode == 2 and "broken.py:1:" in proc.stderr
    (tmp_path / "clean.py").write_text("import torch\n\n\ndef train(model, optimizer, batches, device):\n"
                                       "    return {}\n")
    proc = amplint("verify", "clean.py", cwd=tmp_path)
    assert proc.returncode == 0 and "no findings, nothing to verify" in proc.stdout
    proc = amplint("verify", "clean.py", "--fixtures", str(tmp_path), cwd=tmp_path)
    assert proc.returncode == 2 and "--fixtures applies to the fixtures" in proc.stderr
    proc = amplint("verify", "--problem", "x:y", cwd=tmp_path)
    assert proc.returncode == 2 and "--problem applies to SCRIPT" in proc.stderr
