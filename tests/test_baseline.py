"""--baseline FILE / --write-baseline: report only findings not recorded, across line moves."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from test_config_hierarchy import BAD


def run(*args, cwd):
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([sys.executable, "-m", "amplint", "--isolated", "--no-cache", *args], capture_output=True,
                          text=True, cwd=cwd, env=env)


def test_baseline_survives_line_moves_and_reports_new_findings(tmp_path):
    (tmp_path / "src").mkdir()
    f = tmp_path / "src" / "train.py"
    f.write_text(BAD)
    w = run("--baseline", "amplint-baseline.json", "--write-baseline", "src", cwd=tmp_path)
    assert w.returncode == 0 and "Recorded 2 findings in the baseline amplint-baseline.json." in w.stderr
    doc = json.loads((tmp_path / "amplint-baseline.json").read_text())
    assert doc["version"] == 1 and [(e["code"], e["filename"], e["row"]) for e in doc["findings"]] == [
        ("AMP002", "src/train.py", 10), ("AMP001", "src/train.py", 11)]
    p = run("--baseline", "amplint-baseline.json", "src", cwd=tmp_path)
    assert p.returncode == 0 and "All checks passed!" in p.stdout and "2 findings in the baseline not shown." in p.stdout
    # lines added above: the findings moved, the baseline still holds them
    f.write_text("# header\n\n\n" + BAD)
    p = run("--baseline", "amplint-baseline.json", "src", cwd=tmp_path)
    assert p.returncode == 0, p.stdout
    # a new copy of the loop is a new finding; from another folder the baseline still applies
    f.write_text(BAD + "\n\n" + BAD.split("\n\n\n", 1)[1].replace("def train(", "def train2("))
    p = run("--baseline", "../amplint-baseline.json", "train.py", cwd=tmp_path / "src")
    assert p.returncode == 1
    assert [line.split(" ")[0] for line in p.stdout.splitlines() if ": AMP" in line] == ["train.py:20:9:", "train.py:21:9:"]
    assert "2 findings in the baseline not shown." in p.stdout


def test_baseline_stale_and_errors(tmp_path):
    f = tmp_path / "t.py"
    f.write_text(BAD)
    run("--baseline", "b.json", "--write-baseline", "t.py", cwd=tmp_path)
    f.write_text(BAD.replace("torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)", "pass"))
    p = run("--baseline", "b.json", "t.py", cwd=tmp_path)
    assert p.returncode == 0 and "1 baseline entry no longer matches a finding" in p.stderr
    missing = run("--baseline", "nope.json", "t.py", cwd=tmp_path)
    assert missing.returncode == 2 and "no such baseline file" in missing.stderr
    (tmp_path / "bad.json").write_text("{}")
    assert run("--baseline", "bad.json", "t.py", cwd=tmp_path).returncode == 2
    assert run("--write-baseline", "t.py", cwd=tmp_path).returncode == 2
