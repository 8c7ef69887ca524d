"""Per-file configuration: each file gets its nearest configuration, whatever the order of the
paths on the command line; `extend` inherits; stdin finds its configuration from
--stdin-filename."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

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


def run(*args, cwd, input=None):
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    env.pop("AMPLINT_CACHE_DIR", None)
    return subprocess.run([sys.executable, "-m", "amplint", *args], capture_output=True, text=True, cwd=cwd,
                          input=input, env=env)


def findings(p, root) -> list[tuple[str, str]]:
    """(path relative to ``root``, code) of the JSON findings."""
    return sorted((os.path.relpath(d["filename"], root), d["code"]) for d in json.loads(p.stdout))


@pytest.fixture
def repo(tmp_path):
    """Two packages, each with its own [tool.amplint]: a ignores AMP001, b ignores AMP002."""
    for pkg, ignored in (("a", "AMP001"), ("b", "AMP002")):
        (tmp_path / pkg).mkdir()
        (tmp_path / pkg / "pyproject.toml").write_text(f'[project]\nname = "{pkg}"\n\n[tool.amplint]\nignore = ["{ignored}"]\n')
        (tmp_path / pkg / "train.py").write_text(BAD)
    return tmp_path


EXPECTED = [("a/train.py", "AMP002"), ("b/train.py", "AMP001")]


@pytest.mark.parametrize("order", [("a/train.py", "b/train.py"), ("b/train.py", "a/train.py")])
def test_each_file_its_nearest_config_in_both_orders(repo, order):
    p = run("--no-cache", "--output-format", "json", *order, cwd=repo)
    assert p.returncode == 1, p.stderr
    assert findings(p, repo) == EXPECTED


def test_directory_walk_uses_nearest_config(repo):
    p = run("--no-cache", "--output-format", "json", ".", cwd=repo)
    assert findings(p, repo) == EXPECTED
    # pre-commit hands files over from the repository root, in any order, with --force-exclude
    p = run("--no-cache", "--force-exclude", "--output-format", "json", "b/train.py", "a/train.py", cwd=repo)
    assert findings(p, repo) == EXPECTED


def test_config_relative_patterns_are_anchored_at_their_file(repo):
    (repo / "a" / "pyproject.toml").write_text('[tool.amplint]\nper-file-ignores = { "sub/**" = ["AMP002"] }\n')
    (repo / "a" / "sub").mkdir()
    (repo / "a" / "sub" / "t.py").write_text(BAD)
    (repo / "sub").mkdir()
    (repo / "sub" / "t.py").write_text(BAD)
    p = run("--no-cache", "--output-format", "json", "a", "sub", cwd=repo)
    # a's `sub/**` covers a/sub/t.py, not the top-level sub/t.py
    assert findings(p, repo) == [("a/sub/t.py", "AMP001"), ("a/train.py", "AMP001"), ("a/train.py", "AMP002"),
                                 ("sub/t.py", "AMP001"), ("sub/t.py", "AMP002")]


def test_extend_inherits_and_overrides(tmp_path):
    (tmp_path / "pyproject.toml").write_text(textwrap.dedent("""\
        [tool.amplint]
        ignore = ["AMP002"]
        per-file-ignores = { "pkg/legacy_*.py" = ["AMP001"] }
        """))
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "amplint.toml").write_text('extend = "../pyproject.toml"\nextend-select = ["AMP903"]\n')
    (pkg / "train.py").write_text(BAD)
    (pkg / "legacy_train.py").write_text(BAD)
    p = run("--no-cache", "--output-format", "json", "pkg", cwd=tmp_path)
    # AMP002 ignored by the extended file; its per-file-ignores are anchored at its own folder
    assert findings(p, tmp_path) == [("pkg/train.py", "AMP001")]
    s = run("--show-settings", "pkg/train.py", cwd=tmp_path)
    assert s.returncode == 0, s.stderr
    assert f"config file: {pkg / 'amplint.toml'}" in s.stdout
    assert f"extends: {tmp_path / 'pyproject.toml'} <- {pkg / 'amplint.toml'}" in s.stdout
    assert "AMP903" in s.stdout.split("enabled rules")[1].split("\n")[0]
    assert "AMP002" not in s.stdout.split("enabled rules")[1].split("\n")[0]


def test_extend_cycle_and_missing_file_are_errors(tmp_path):
    (tmp_path / "amplint.toml").write_text('extend = "other.toml"\n')
    (tmp_path / "other.toml").write_text('extend = "amplint.toml"\n')
    (tmp_path / "t.py").write_text(BAD)
    p = run("--no-cache", "t.py", cwd=tmp_path)
    assert p.returncode == 2 and "`extend` forms a cycle" in p.stderr
    (tmp_path / "other.toml").write_text('extend = "missing.toml"\n')
    p = run("--no-cache", "t.py", cwd=tmp_path)
    assert p.returncode == 2 and "no such configuration file" in p.stderr


def test_config_file_precedence_in_one_folder(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.amplint]\nignore = ["AMP001"]\n')
    (tmp_path / "amplint.toml").write_text('ignore = ["AMP002"]\n')
    (tmp_path / "t.py").write_text(BAD)
    p = run("--no-cache", "--output-format", "json", "t.py", cwd=tmp_path)
    assert [c for _f, c in findings(p, tmp_path)] == ["AMP001"]  # amplint.toml wins over pyproject.toml


def test_stdin_finds_config_from_stdin_filename(repo):
    for name, expected in (("a/new.py", ["AMP002"]), ("b/new.py", ["AMP001"])):
        p = run("--no-cache", "--output-format", "json", "--stdin-filename", name, "-", cwd=repo, input=BAD)
        assert [d["code"] for d in json.loads(p.stdout)] == expected, name
        assert [d["filename"] for d in json.loads(p.stdout)] == [str(repo / name)]


def test_cli_overrides_every_config(repo):
    p = run("--no-cache", "--output-format", "json", "--select", "AMP001", "a", "b", cwd=repo)
    # --select starts the selection again on the command line, in every package (ruff's layers)
    assert findings(p, repo) == [("a/train.py", "AMP001"), ("b/train.py", "AMP001")]


def test_explicit_config_file_applies_to_all(repo):
    (repo / "shared.toml").write_text('ignore = ["AMP001", "AMP002"]\n')
    p = run("--no-cache", "--config", "shared.toml", "a", "b", cwd=repo)
    assert p.returncode == 0 and "All checks passed!" in p.stdout
