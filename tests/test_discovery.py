"""Discovery: .gitignore / .ignore / git's excludes (pathspec), --no-respect-gitignore, ruff's
glob semantics for exclude and per-file-ignores, --show-files."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from test_config_hierarchy import BAD

from amplint.globs import PatternSet


def run(*args, cwd, env_extra=None):
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    env.pop("AMPLINT_CACHE_DIR", None)
    env.update(env_extra or {})
    return subprocess.run([sys.executable, "-m", "amplint", *args], capture_output=True, text=True, cwd=cwd, env=env)


def git(*args, cwd):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def ml_repo(tmp_path):
    """An ML repository: copies of train.py under wandb/run-*/files/, outputs/, generated/."""
    repo = tmp_path / "repo"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "train.py").write_text(BAD)
    for d in ("wandb/run-20240101_000000-abc/files", "outputs/2024-01-01", "generated", "src/scratch"):
        (repo / d).mkdir(parents=True)
        (repo / d / "train.py").write_text(BAD)
    (repo / "outputs" / "2024-01-01" / "keep.py").write_text(BAD)
    (repo / ".gitignore").write_text("wandb/\noutputs/*\n!outputs/2024-01-01/\noutputs/2024-01-01/train.py\n")
    (repo / "src" / ".gitignore").write_text("scratch/\n")
    (repo / ".ignore").write_text("generated/\n")
    git("init", "-q", cwd=repo)
    home = tmp_path / "home"
    (home / ".config" / "git").mkdir(parents=True)
    return repo, {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "GIT_CONFIG_GLOBAL": str(home / ".gitconfig")}


def files(p) -> list[str]:
    assert p.returncode == 0, p.stderr
    return p.stdout.split()


def test_gitignore_respected_by_default(ml_repo):
    repo, env = ml_repo
    assert files(run("--show-files", ".", cwd=repo, env_extra=env)) == ["outputs/2024-01-01/keep.py", "src/train.py"]
    p = run("--no-cache", ".", cwd=repo, env_extra=env)
    assert sorted({line.split(":")[0] for line in p.stdout.splitlines() if ": AMP" in line}) == [
        "outputs/2024-01-01/keep.py", "src/train.py"]


def test_no_respect_gitignore(ml_repo):
    repo, env = ml_repo
    got = files(run("--show-files", "--no-respect-gitignore", ".", cwd=repo, env_extra=env))
    assert got == ["generated/train.py", "outputs/2024-01-01/keep.py", "outputs/2024-01-01/train.py",
                   "src/scratch/train.py", "src/train.py", "wandb/run-20240101_000000-abc/files/train.py"]
    (repo / "pyproject.toml").write_text("[tool.amplint]\nrespect-gitignore = false\n")
    assert len(files(run("--show-files", ".", cwd=repo, env_extra=env))) == 6


def test_walk_from_a_subfolder_uses_parent_gitignore(ml_repo):
    repo, env = ml_repo
    assert files(run("--show-files", "wandb", "outputs", cwd=repo, env_extra=env)) == ["outputs/2024-01-01/keep.py"]
    # a path named on the command line is linted even when ignored (like ruff)
    assert files(run("--show-files", "wandb/run-20240101_000000-abc/files/train.py", cwd=repo, env_extra=env)) == [
        "wandb/run-20240101_000000-abc/files/train.py"]


def test_global_excludes_and_info_exclude(ml_repo):
    repo, env = ml_repo
    (repo / "src" / "local_only.py").write_text(BAD)
    (repo / "src" / "mine.py").write_text(BAD)
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "exclude").write_text("local_only.py\n")
    excludes = repo.parent / "my-excludes"
    excludes.write_text("mine.py\n")
    (repo.parent / "home" / ".gitconfig").write_text(f"[user]\n\tname = x\n[core]\n\texcludesFile = {excludes}\n")
    assert files(run("--show-files", "src", cwd=repo, env_extra=env)) == ["src/train.py"]
    # the default global file: $XDG_CONFIG_HOME/git/ignore
    (repo.parent / "home" / ".gitconfig").write_text("")
    (repo.parent / "home" / ".config" / "git" / "ignore").write_text("train.py\n")
    assert files(run("--show-files", "src", cwd=repo, env_extra=env)) == ["src/mine.py"]


def test_gitignore_outside_a_repository_is_not_read(tmp_path):
    (tmp_path / "gen").mkdir()
    (tmp_path / "gen" / "t.py").write_text(BAD)
    (tmp_path / ".gitignore").write_text("gen/\n")
    assert files(run("--show-files", ".", cwd=tmp_path)) == ["gen/t.py"]
    (tmp_path / ".ignore").write_text("gen/\n")  # .ignore counts everywhere
    assert files(run("--show-files", ".", cwd=tmp_path)) == []


@pytest.mark.parametrize("pattern, path, hit", [
    ("**/train.py", "train.py", True),            # `**/` matches zero folders (fnmatch did not)
    ("**/train.py", "a/b/train.py", True),
    ("tests/*", "tests/a/b.py", True),            # `*` crosses `/`, as in ruff (globset defaults)
    ("tests/**", "tests/a/b.py", True),
    ("tests/**", "other/tests/a.py", False),      # a pattern with `/` is anchored
    ("tests", "other/tests/a.py", True),          # a bare name matches any folder
    ("src/**/gen_*.py", "src/gen_a.py", True),
    ("src/**/gen_*.py", "src/x/y/gen_a.py", True),
    ("{docs,examples}/*.py", "examples/t.py", True),
    ("{docs,examples}/*.py", "exampl/t.py", False),
    ("[!a]*.py", "b.py", True),
    ("[!a]*.py", "a.py", False),
    ("./build/*", "build/x.py", True),
])
def test_ruff_glob_semantics(tmp_path, pattern, path, hit):
    ps = PatternSet([(str(tmp_path), pattern)])
    assert ps.path(str(tmp_path / path), str(tmp_path)) is hit


def test_per_file_ignores_double_star(tmp_path):
    (tmp_path / "train.py").write_text(BAD)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "train.py").write_text(BAD)
    (tmp_path / "pyproject.toml").write_text('[tool.amplint]\nper-file-ignores = { "**/train.py" = ["AMP001", "AMP002"] }\n')
    p = run("--no-cache", ".", cwd=tmp_path)
    assert p.returncode == 0, p.stdout


def test_bad_glob_is_a_config_error(tmp_path):
    (tmp_path / "t.py").write_text(BAD)
    p = run("--no-cache", "--extend-exclude", "[abc", "t.py", cwd=tmp_path)
    assert p.returncode == 2 and "bad glob pattern" in p.stderr
