"""The command line: exit codes, formats, selection, configuration, suppression, discovery."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from helpers import FIXTURES, ROOT

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


def run(*args, cwd=None, input=None):
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([sys.executable, "-m", "amplint", *args], capture_output=True, text=True, cwd=cwd,
                          input=input, env=env)


@pytest.fixture
def project(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "train.py").write_text(BAD)
    (tmp_path / "pkg" / "clean.py").write_text("import torch\n\nx = torch.ones(2)\n")
    return tmp_path


def test_findings_exit_1_sorted_concise(project):
    p = run("pkg", "--no-cache", "--isolated", cwd=project)
    assert p.returncode == 1, p.stderr
    lines = [line for line in p.stdout.splitlines() if line.startswith("pkg")]
    assert lines == [
        "pkg/train.py:10:9: AMP002 [*] Gradients are clipped while still scaled: call `scaler.unscale_(optimizer)` before `clip_grad_norm_`",
        "pkg/train.py:11:9: AMP001 `scaler.step(optimizer)` is not followed by `scaler.update()` before the next step",
    ]
    assert "Found 2 errors." in p.stdout


def test_clean_exit_0(project):
    p = run("pkg/clean.py", "--no-cache", "--isolated", cwd=project)
    assert p.returncode == 0
    assert "All checks passed!" in p.stdout


def test_no_files_exit_0(tmp_path):
    p = run(str(tmp_path), "--no-cache", "--isolated")
    assert p.returncode == 0


def test_exit_zero(project):
    assert run("pkg", "--exit-zero", "--no-cache", "--isolated", cwd=project).returncode == 0


def test_missing_path_is_usage_error(tmp_path):
    p = run(str(tmp_path / "nope.py"), "--isolated")
    assert p.returncode == 2
    assert "No such file or directory" in p.stderr
    assert "Traceback" not in p.stderr


def test_json_shape(project):
    p = run("pkg", "--output-format", "json", "--no-cache", "--isolated", cwd=project)
    data = json.loads(p.stdout)
    assert [d["code"] for d in data] == ["AMP002", "AMP001"]
    d = data[0]
    assert set(d) == {"cell", "code", "end_location", "filename", "fix", "location", "message", "name", "noqa_row",
                      "related", "severity", "url"}
    assert d["location"] == {"row": 10, "column": 9}
    assert d["end_location"]["row"] == 10
    assert Path(d["filename"]).is_absolute()
    assert d["name"] == "grad-use-before-unscale"
    assert d["fix"]["applicability"] == "safe"
    assert d["fix"]["edits"] == [{"content": '        scaler.unscale_(optimizer)\n',
                                  "location": {"row": 10, "column": 1}, "end_location": {"row": 10, "column": 1}}]
    assert d["url"].endswith("/AMP002.md")
    assert data[1]["fix"] is not None and data[1]["fix"]["applicability"] == "unsafe"


def test_json_lines_and_github(project):
    p = run("pkg", "--output-format", "json-lines", "--no-cache", "--isolated", cwd=project)
    rows = [json.loads(line) for line in p.stdout.splitlines()]
    assert [r["code"] for r in rows] == ["AMP002", "AMP001"]
    g = run("pkg", "--output-format", "github", "--no-cache", "--isolated", cwd=project)
    first = g.stdout.splitlines()[0]
    assert first.startswith("::error title=amplint (AMP002),file=pkg/train.py,line=10,col=9,endLine=10,endColumn=")
    assert first.endswith("::pkg/train.py:10:9: AMP002 Gradients are clipped while still scaled: call `scaler.unscale_(optimizer)` before `clip_grad_norm_`")


def test_full_format_shows_source(project):
    p = run("pkg/train.py", "--output-format", "full", "--no-cache", "--isolated", cwd=project)
    assert "10 |         torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)" in p.stdout
    assert "^^^^ AMP002" in p.stdout.replace("^" * 10, "^^^^")
    assert "= help: Insert `scaler.unscale_(optimizer)` before the clip" in p.stdout


def test_statistics(project):
    p = run("pkg", "--statistics", "--no-cache", "--isolated", cwd=project)
    assert p.stdout.splitlines() == ["1\tAMP001\t[ ] step-without-update", "1\tAMP002\t[*] grad-use-before-unscale"]
    assert p.returncode == 1


def test_select_ignore_prefixes(project):
    assert "AMP002" not in run("pkg", "--ignore", "AMP002", "--no-cache", "--isolated", cwd=project).stdout
    p = run("pkg", "--select", "AMP0", "--ignore", "AMP00", "--no-cache", "--isolated", cwd=project)
    assert p.returncode == 0
    p = run("pkg", "--select", "AMP002", "--ignore", "AMP0", "--no-cache", "--isolated", cwd=project)
    assert "AMP002" in p.stdout, "the more specific selector wins"
    assert "AMP001" not in p.stdout


def test_unknown_selector_is_an_error(project):
    p = run("pkg", "--select", "AMP777", "--isolated", cwd=project)
    assert p.returncode == 2
    assert "unknown rule selector `AMP777`" in p.stderr


def test_pyproject_config(project):
    (project / "pyproject.toml").write_text(textwrap.dedent(
        """\
        [tool.amplint]
        ignore = ["AMP001"]
        per-file-ignores = { "pkg/other.py" = ["AMP002"] }
        """
    ))
    (project / "pkg" / "other.py").write_text(BAD)
    p = run("pkg", "--no-cache", cwd=project)
    assert "pkg/train.py:10:9: AMP002" in p.stdout
    assert "AMP001" not in p.stdout
    assert "other.py" not in p.stdout


@pytest.mark.parametrize("content, message", [
    ("[tool.amplint]\nselct = ['AMP001']\n", "unknown key(s) in [tool.amplint]: selct"),
    ("[tool.amplint]\nselect = ['AMP999']\n", "unknown rule selector `AMP999`"),
    ("[tool.amplint]\nselect = 'AMP001'\n", "`select` must be a list of strings"),
    ("[tool.amplint\nselect = 1\n", "cannot read"),
])
def test_config_errors(project, content, message):
    (project / "pyproject.toml").write_text(content)
    p = run("pkg", cwd=project)
    assert p.returncode == 2
    assert message in p.stderr
    assert "Traceback" not in p.stderr


def test_noqa(project):
    src = BAD.replace("clip_grad_norm_(model.parameters(), 1.0)", "clip_grad_norm_(model.parameters(), 1.0)  # noqa: AMP002")
    src = src.replace("scaler.step(optimizer)", "scaler.step(optimizer)  # noqa")
    (project / "pkg" / "train.py").write_text(src)
    p = run("pkg", "--no-cache", "--isolated", cwd=project)
    assert p.returncode == 0, p.stdout
    other = BAD.replace("clip_grad_norm_(model.parameters(), 1.0)", "clip_grad_norm_(model.parameters(), 1.0)  # noqa: E501")
    (project / "pkg" / "train.py").write_text(other)
    assert "AMP002" in run("pkg", "--no-cache", "--isolated", cwd=project).stdout


def test_noqa_on_last_line_of_statement(project):
    src = BAD.replace(
        "torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)",
        "torch.nn.utils.clip_grad_norm_(\n            model.parameters(), 1.0\n        )  # noqa: AMP002",
    )
    (project / "pkg" / "train.py").write_text(src)
    assert "AMP002" not in run("pkg", "--no-cache", "--isolated", cwd=project).stdout


def test_file_level_noqa(project):
    (project / "pkg" / "train.py").write_text("# amplint: noqa: AMP001\n" + BAD)
    out = run("pkg", "--no-cache", "--isolated", cwd=project).stdout
    assert "AMP001" not in out and "AMP002" in out
    (project / "pkg" / "train.py").write_text("# amplint: noqa\n" + BAD)
    assert run("pkg", "--no-cache", "--isolated", cwd=project).returncode == 0


def test_unknown_code_in_noqa_warns(project):
    (project / "pkg" / "train.py").write_text(BAD.replace("scaler.step(optimizer)", "scaler.step(optimizer)  # noqa: AMP777"))
    p = run("pkg", "--no-cache", "--isolated", cwd=project)
    assert "unknown rule code `AMP777` in noqa comment" in p.stderr


def test_syntax_error_is_amp000_and_others_still_checked(project):
    (project / "pkg" / "broken.py").write_text("import torch\nscaler = torch.amp.GradScaler(\ndef f(:\n")
    (project / "pkg" / "broken_plain.py").write_text("def f(:\n    pass\n")
    p = run("pkg", "--no-cache", "--isolated", cwd=project)
    assert p.returncode == 1
    assert "pkg/broken.py:3:1: AMP000 SyntaxError: invalid syntax" in p.stdout
    assert "pkg/train.py:10:9: AMP002" in p.stdout
    q = run("pkg/broken_plain.py", "--no-cache", "--isolated", cwd=project)
    assert q.returncode == 1 and "AMP000" in q.stdout, "a file named on the command line is always syntax-checked"


def test_discovery_skips_usual_directories(project):
    for d in (".venv", "build", ".git", "node_modules"):
        (project / d).mkdir()
        (project / d / "train.py").write_text(BAD)
    p = run(".", "--no-cache", "--isolated", cwd=project)
    assert {line.split(":")[0] for line in p.stdout.splitlines() if ": AMP" in line} == {"pkg/train.py"}


def test_force_exclude(project):
    (project / "pyproject.toml").write_text('[tool.amplint]\nextend-exclude = ["pkg/train.py"]\n')
    assert run("pkg/train.py", "--no-cache", cwd=project).returncode == 1, "explicit paths are linted by default"
    assert run("pkg/train.py", "--no-cache", "--force-exclude", cwd=project).returncode == 0


def test_stdin():
    p = run("--stdin-filename", "train.py", "-", "--isolated", input=BAD)
    assert p.returncode == 1
    assert "train.py:10:9: AMP002" in p.stdout


def test_explain_and_list_rules():
    p = run("--explain", "AMP002")
    assert p.returncode == 0
    assert "# grad-use-before-unscale (AMP002)" in p.stdout
    for section in ("## What it does", "## Why is this bad?", "## Example", "## Use instead", "## Fix safety"):
        assert section in p.stdout
    assert run("--explain", "AMP999").returncode == 2
    listed = run("--list-rules")
    assert listed.returncode == 0
    assert "AMP001  step-without-update" in listed.stdout


def test_version_and_help():
    p = run("--version")
    assert p.returncode == 0 and p.stdout.startswith("amplint ")
    h = run("--help")
    assert h.returncode == 0 and "verify" in h.stdout


def test_fixtures_dir_reports_every_marker_exit_1():
    p = run(str(FIXTURES), "--select", "ALL", "--output-format", "json", "--no-cache", "--isolated")
    assert p.returncode == 1
    data = json.loads(p.stdout)
    assert data and all(d["location"]["row"] >= 1 and d["location"]["column"] >= 1 for d in data)
    assert not any("good.py" in d["filename"] for d in data)


def test_python_api(tmp_path):
    import amplint

    diags = amplint.lint_source(BAD, filename="train.py")
    assert [(d.code, d.location.row) for d in diags] == [("AMP002", 10), ("AMP001", 11)]
    (tmp_path / "a.py").write_text(BAD)
    diags = amplint.lint_paths([str(tmp_path)])
    assert [(d.code, d.location.row) for d in diags] == [("AMP002", 10), ("AMP001", 11)]


def test_module_entry_point_runs_from_checkout():
    p = subprocess.run([sys.executable, "-m", "amplint", "--version"], capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 0
