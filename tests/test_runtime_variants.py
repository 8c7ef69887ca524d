"""The silent (and the other loud) variants of the failure modes documented in rules.md.

Each variant is a copy of a rule's fixture pair, edited into another documented shape of the
same misuse; one `amplint verify` run judges them all. Before the signs, these came out NOT
REPRODUCED: a verdict accepted exactly one exception.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys

import pytest
from helpers import FIXTURES, ROOT

HAS_TORCH = importlib.util.find_spec("torch") is not None
pytestmark = [pytest.mark.runtime, pytest.mark.skipif(not HAS_TORCH, reason="needs torch (the runtime extra)")]

ADAM = ("    model.train()\n", "    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)\n    model.train()\n")

# code: (what the variant is, the verdict it must reach, the sign that must show,
#        [(file, old, new), ...] edits of the fixture pair)
VARIANTS = {
    "AMP001": ("a scaler built anew every iteration (never updated): every overflowing step skipped",
               "CONFIRMED", "skipped",
               [("bad.py", "    scaler = torch.amp.GradScaler(device, init_scale=2.0**16)\n", ""),
                ("bad.py", "    for x, y in batches:\n",
                 "    for x, y in batches:\n        scaler = torch.amp.GradScaler(device, init_scale=2.0**24)\n"),
                ("good.py", "init_scale=2.0**16", "init_scale=2.0**24")]),
    "AMP002": ("with Adam: the update is scale-invariant, the logged norm is scale x too large",
               "CONFIRMED", "scaled-series",
               [("bad.py", *ADAM), ("good.py", *ADAM)]),
    "AMP003": ("optimizer.step() without an update(): SGD diverges", "CONFIRMED", "loss",
               [("bad.py", "        scaler.update()  # error: AMP006\n", "")]),
    "AMP004": ("a loss scaled once, then unscaled: step() divides unscaled gradients by the scale",
               "CONFIRMED", "scaled-update",
               [("bad.py", "    for x, y in batches:\n", "    for i, (x, y) in enumerate(batches):\n"),
                ("bad.py", "        loss.backward()  # error: AMP004\n",
                 "        if i == 0:\n            scaler.scale(loss).backward()\n        else:\n"
                 "            loss.backward()  # error: AMP004\n")]),
    "AMP005": ("unscale_ after step", "CONFIRMED", "raises",
               [("bad.py", "        scaler.unscale_(optimizer)  # error: AMP005\n        clip_grad_norm_"
                 "(model.parameters(), MAX_NORM)\n", ""),
                ("bad.py", "            scaler.step(optimizer)\n",
                 "            scaler.step(optimizer)\n            scaler.unscale_(optimizer)\n")]),
    "AMP010": ("a squared-norm penalty: scale**2 times too large", "CONFIRMED", "scaled-series",
               [("bad.py", ").sum().sqrt()", ").sum()"), ("good.py", ").sum().sqrt()", ").sum()")]),
    "AMP011": ("a positional closure: not checked; its scaled backward makes the update scale x too large",
               "CONFIRMED", "loss",
               [("bad.py", "scaler.step(optimizer, closure=closure)", "scaler.step(optimizer, closure)")]),
    "AMP012": ("zero_grad(set_to_none=False) before the step: the step consumes zeros", "CONFIRMED",
               "zero-grads", [("bad.py", "optimizer.zero_grad(set_to_none=True)  # error: AMP012",
                               "optimizer.zero_grad(set_to_none=False)  # error: AMP012")]),
    "AMP102": ("an unsupported autocast dtype: a warning, and the region is disabled", "MECHANISM ONLY",
               "autocast-off",
               [("bad.py", "with torch.autocast(torch.device(device), dtype=torch.float16):",
                 "with torch.autocast(device, dtype=torch.float32):")]),
    "AMP104": ("custom_bwd without custom_fwd: AttributeError in the backward", "CONFIRMED", "raises",
               [("bad.py", "        def backward(ctx, grad):  # error: AMP104\n",
                 "        @torch.amp.custom_bwd(device_type=device)\n        def backward(ctx, grad):\n"),
                ("bad.py", "        @torch.amp.custom_fwd(device_type=device)\n", ""),
                ("bad.py", "        def forward(ctx, x, weight, bias):\n",
                 "        def forward(ctx, x, weight, bias):  # error: AMP104\n")]),
    "AMP201": ("update() in evaluation: AssertionError", "CONFIRMED", "raises",
               [("bad.py", "            total += scaler.scale(val_loss).item()  # error: AMP015, AMP201\n",
                 "            total += val_loss.item()\n            scaler.update()  # error: AMP201\n")]),
}


@pytest.fixture(scope="module")
def variants(tmp_path_factory):
    dest = tmp_path_factory.mktemp("variants") / "fixtures"
    dest.mkdir()
    for code, (_what, _verdict, _sign, edits) in VARIANTS.items():
        shutil.copytree(FIXTURES / code, dest / code)
        for name, old, new in edits:
            path = dest / code / name
            text = path.read_text()
            assert old in text, (code, name, old)
            path.write_text(text.replace(old, new, 1))
    out = dest.parent / "v.json"
    proc = subprocess.run([sys.executable, "-m", "amplint", "verify", "--device", "cpu", "--fixtures", str(dest),
                           "--json", str(out), "-q"], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    return {r["code"]: r for r in json.loads(out.read_text())["rules"]}


@pytest.mark.parametrize("code", sorted(VARIANTS))
def test_documented_variant_is_recognised(variants, code):
    what, verdict, sign, _edits = VARIANTS[code]
    r = variants[code]
    assert r["runtime_verdict"] == verdict, (what, r["runtime_verdict"], r["note"])
    shown = {s["sign"] for s in r["signs"] if s["shown"]}
    assert sign in shown, (what, shown, [s["sentence"] for s in r["signs"]])


def test_silent_variant_numbers(variants):
    signs = {c: {s["sign"]: s for s in r["signs"]} for c, r in variants.items()}
    # AMP003 without update: the loss went non-finite
    assert "non-finite" in signs["AMP003"]["loss"]["sentence"]
    # AMP010 squared: the penalty ratio is scale**2 (1024**2) on identical parameters
    assert signs["AMP010"]["scaled-series"]["values"]["power"] == 2
    # AMP011 positional closure: the update was scale times the twin's
    assert signs["AMP011"]["scaled-update"]["shown"] and signs["AMP011"]["scaled-update"]["values"]["power"] == 1
    # AMP002 with Adam: the clip saw scaled gradients, the loss did not suffer
    assert signs["AMP002"]["scaled-clip"]["shown"] and not signs["AMP002"]["loss"]["shown"]
