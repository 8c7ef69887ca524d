"""--fix / --diff / --add-noqa: correct edits, verified results, files written safely."""

from __future__ import annotations

import shutil
import stat
import subprocess
import sys
import textwrap

import pytest
from helpers import FIXTURES

BAD = textwrap.dedent(
    """\
    import torch


    def train(model, optimizer, loader):
        scaler = torch.amp.GradScaler("cuda")
        for x, y in loader:
            with torch.autocast("cuda", dtype=torch.float16):
                loss = model(x, y)
            scaler.scale(loss).backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
    """
)


def run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "amplint", "--isolated", "--no-cache", *args],
                          capture_output=True, text=True, cwd=cwd)


def test_fix_applies_safe_fix_only(tmp_path):
    f = tmp_path / "t.py"
    f.write_text(BAD)
    p = run("--fix", str(f))
    assert p.returncode == 1, "the unsafe AMP001 finding remains"
    text = f.read_text()
    assert "        scaler.unscale_(optimizer)\n        torch.nn.utils.clip_grad_norm_" in text
    assert "scaler.update()" not in text
    assert "Found 2 errors (1 fixed, 1 remaining)." in p.stdout


def test_unsafe_fixes_and_idempotence(tmp_path):
    f = tmp_path / "t.py"
    f.write_text(BAD)
    p = run("--fix", "--unsafe-fixes", str(f))
    assert p.returncode == 0, p.stdout
    once = f.read_text()
    assert once.endswith("        scaler.step(optimizer)\n        scaler.update()\n")
    p2 = run("--fix", "--unsafe-fixes", str(f))
    assert p2.returncode == 0
    assert f.read_text() == once, "a second --fix changes nothing"


def test_exit_non_zero_on_fix(tmp_path):
    f = tmp_path / "t.py"
    f.write_text(BAD)
    assert run("--fix", "--unsafe-fixes", "--exit-non-zero-on-fix", str(f)).returncode == 1
    assert run("--fix", "--unsafe-fixes", "--exit-non-zero-on-fix", str(f)).returncode == 0


def test_diff_does_not_write(tmp_path):
    f = tmp_path / "t.py"
    f.write_text(BAD)
    p = run("--diff", str(f))
    assert p.returncode == 1
    assert f"--- {f}\n+++ {f}\n" in p.stdout
    assert "+        scaler.unscale_(optimizer)\n" in p.stdout
    assert f.read_text() == BAD
    clean = tmp_path / "c.py"
    clean.write_text("x = 1\n")
    assert run("--diff", str(clean)).returncode == 0


def test_fix_keeps_encoding_newlines_bom_and_mode(tmp_path):
    f = tmp_path / "t.py"
    src = "# -*- coding: latin-1 -*-\n# caf\xe9\n" + BAD
    f.write_bytes(src.replace("\n", "\r\n").encode("latin-1"))
    f.chmod(0o754)
    assert run("--fix", str(f)).returncode == 1
    data = f.read_bytes()
    assert b"caf\xe9" in data
    assert b"\r\n        scaler.unscale_(optimizer)\r\n" in data
    assert b"\n" not in data.replace(b"\r\n", b"")
    assert stat.S_IMODE(f.stat().st_mode) == 0o754
    g = tmp_path / "bom.py"
    g.write_bytes(b"\xef\xbb\xbf" + BAD.encode())
    run("--fix", str(g))
    out = g.read_bytes()
    assert out.startswith(b"\xef\xbb\xbf") and out.count(b"\xef\xbb\xbf") == 1
    assert b"scaler.unscale_(optimizer)" in out


def test_fix_all_fixtures_removes_every_safe_finding(tmp_path):
    """Issue 5 acceptance: --select ALL --fix on copies of every bad.py."""
    for bad in sorted(FIXTURES.glob("AMP*/bad.py")):
        shutil.copy(bad, tmp_path / f"{bad.parent.name}.py")
    run("--select", "ALL", "--fix", str(tmp_path))
    after = run("--select", "ALL", "--output-format", "json", str(tmp_path))
    import json

    remaining = json.loads(after.stdout)
    assert not [d for d in remaining if d["fix"] and d["fix"]["applicability"] == "safe"]
    for f in tmp_path.glob("*.py"):
        compile(f.read_text(), str(f), "exec")
    before = {f: f.read_bytes() for f in tmp_path.glob("*.py")}
    run("--select", "ALL", "--fix", str(tmp_path))
    assert {f: f.read_bytes() for f in tmp_path.glob("*.py")} == before


def test_a_fix_that_breaks_the_file_is_refused(tmp_path, monkeypatch):
    from amplint.config import CliOverrides, build_settings
    from amplint.engine import Linter
    from amplint.fixer import fix_paths
    from amplint.rules import FixPlan, NodeEdit, all_rules
    from amplint.rules.amp002_grad_use_before_unscale import GradUseBeforeUnscale

    original = GradUseBeforeUnscale.check

    def broken(self, model):
        for f in original(self, model):
            f.fix = FixPlan("safe", "broken", [NodeEdit("replace", f.node, "clip(")])
            yield f

    monkeypatch.setattr(GradUseBeforeUnscale, "check", broken)
    f = tmp_path / "t.py"
    f.write_text(BAD)
    settings = build_settings([str(f)], CliOverrides(isolated=True), all_rules())
    results = fix_paths([str(f)], settings)
    assert f.read_text() == BAD
    assert results[0].fixes_applied == 0
    assert {d.code for d in results[0].diagnostics} == {"AMP001", "AMP002"}
    assert Linter(settings)


def test_interrupted_write_leaves_file_intact(tmp_path, monkeypatch):
    from amplint import fixer
    from amplint.engine import decode

    f = tmp_path / "t.py"
    f.write_text(BAD)

    def boom(*a, **k):
        raise KeyboardInterrupt

    from amplint import safeio

    monkeypatch.setattr(safeio, "_exchange", boom)
    monkeypatch.setattr(safeio, "_rename", boom)
    with pytest.raises(KeyboardInterrupt):
        fixer.write_atomic(f, "x = 1\n", decode(f.read_bytes()))
    assert f.read_text() == BAD
    assert [p.name for p in tmp_path.iterdir()] == ["t.py"], "no temporary file left behind"


def test_add_noqa_then_clean(tmp_path):
    f = tmp_path / "t.py"
    f.write_text(BAD)
    p = run("--add-noqa", str(f))
    assert p.returncode == 0
    text = f.read_text()
    assert "torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # noqa: AMP002\n" in text
    assert "scaler.step(optimizer)  # noqa: AMP001\n" in text
    assert run(str(f)).returncode == 0
    assert run("--extend-select", "AMP900", str(f)).returncode == 0


def test_add_noqa_merges_existing_codes(tmp_path):
    f = tmp_path / "t.py"
    f.write_text(BAD.replace("scaler.step(optimizer)", "scaler.step(optimizer)  # noqa: E501"))
    run("--add-noqa", str(f))
    assert "scaler.step(optimizer)  # noqa: E501, AMP001\n" in f.read_text()


def test_unused_noqa_fix(tmp_path):
    f = tmp_path / "t.py"
    good = BAD.replace("        torch.nn", "        scaler.unscale_(optimizer)\n        torch.nn").replace(
        "scaler.step(optimizer)", "scaler.step(optimizer)\n        scaler.update()")
    f.write_text(good.replace("1.0)\n", "1.0)  # noqa: AMP002, E501\n"))
    p = run("--extend-select", "AMP900", str(f))
    assert "AMP900 [*] Unused `noqa` directive (unused: `AMP002`)" in p.stdout
    run("--extend-select", "AMP900", "--fix", str(f))
    assert "1.0)  # noqa: E501\n" in f.read_text()
