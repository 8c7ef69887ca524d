"""The real pre-commit (from PyPI) runs amplint's hooks from this checkout in a temporary repo."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap

import pytest
from helpers import CLIP_BEFORE_UNSCALE, ROOT

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

BAD = CLIP_BEFORE_UNSCALE
GOOD = BAD.replace("        torch.nn.utils", "        scaler.unscale_(optimizer)\n        torch.nn.utils")


def git(*args, cwd):
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@example.com")
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=env)


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory):
    """A snapshot of this checkout (working tree included) as a git repo pre-commit can clone."""
    repo = tmp_path_factory.mktemp("hook-repo")
    for name in ("pyproject.toml", "setup.py", "README.md", ".pre-commit-hooks.yaml"):
        shutil.copy(ROOT / name, repo / name)
    for name in ("amplint", "fixtures"):  # setup.py installs fixtures/ as amplint/fixtures
        shutil.copytree(ROOT / name, repo / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    git("init", "-q", cwd=repo)
    git("add", "-A", cwd=repo)
    assert git("commit", "-qm", "snapshot", cwd=repo).returncode == 0
    sha = git("rev-parse", "HEAD", cwd=repo).stdout.strip()
    return repo, sha


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory):
    return tmp_path_factory.mktemp("pre-commit-home")


@pytest.fixture
def user_repo(tmp_path, hook_repo, pre_commit_home):
    repo_path, sha = hook_repo
    repo = tmp_path / "project"
    repo.mkdir()
    git("init", "-q", cwd=repo)
    # the README's snippet, pointed at the local snapshot
    (repo / ".pre-commit-config.yaml").write_text(textwrap.dedent(
        f"""\
        repos:
          - repo: {repo_path}
            rev: {sha}
            hooks:
              - id: amplint
        """
    ))
    (repo / "pyproject.toml").write_text('[tool.amplint]\nextend-exclude = ["legacy/"]\n')
    git("add", "-A", cwd=repo)
    env = dict(os.environ, PRE_COMMIT_HOME=str(pre_commit_home))
    inst = subprocess.run([sys.executable, "-m", "pre_commit", "install"], cwd=repo, capture_output=True, text=True, env=env)
    assert inst.returncode == 0, inst.stdout + inst.stderr
    return repo, env


def commit(repo, env, message="c"):
    full = dict(env, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com", GIT_COMMITTER_NAME="t",
                GIT_COMMITTER_EMAIL="t@example.com", PATH=os.path.dirname(sys.executable) + os.pathsep + env["PATH"])
    return subprocess.run(["git", "commit", "-m", message], cwd=repo, capture_output=True, text=True, env=full)


def test_staged_bad_file_fails(user_repo):
    repo, env = user_repo
    (repo / "train.py").write_text(BAD)
    git("add", "train.py", cwd=repo)
    p = commit(repo, env)
    out = p.stdout + p.stderr
    assert p.returncode != 0, out
    assert "train.py:10:9: AMP002" in out
    assert "amplint" in out and "Failed" in out


def test_good_file_passes(user_repo):
    repo, env = user_repo
    (repo / "train.py").write_text(GOOD)
    git("add", "train.py", cwd=repo)
    p = commit(repo, env)
    out = p.stdout + p.stderr
    assert p.returncode == 0, out
    assert "amplint" in out and "Passed" in out


def test_commit_without_python_files_passes(user_repo):
    repo, env = user_repo
    (repo / "notes.md").write_text("# notes\n")
    git("add", "notes.md", cwd=repo)
    p = commit(repo, env)
    out = p.stdout + p.stderr
    assert p.returncode == 0, out
    assert "(no files to check)Skipped" in out.replace(".", "")


def test_excluded_path_is_respected(user_repo):
    repo, env = user_repo
    (repo / "legacy").mkdir()
    (repo / "legacy" / "old_train.py").write_text(BAD)
    git("add", "legacy/old_train.py", cwd=repo)
    p = commit(repo, env)
    out = p.stdout + p.stderr
    assert p.returncode == 0, out
    assert "Passed" in out, "the hook ran (the file was passed to it) and --force-exclude dropped it"


def test_local_hook_snippet_with_installed_amplint(tmp_path, pre_commit_home):
    """The README's second snippet: a `repo: local` hook running the installed amplint."""
    repo = tmp_path / "project"
    repo.mkdir()
    git("init", "-q", cwd=repo)
    (repo / ".pre-commit-config.yaml").write_text(textwrap.dedent(
        """\
        repos:
          - repo: local
            hooks:
              - id: amplint
                name: amplint
                entry: amplint --force-exclude
                language: system
                types_or: [python, pyi, jupyter]
                require_serial: true
        """
    ))
    git("add", "-A", cwd=repo)
    env = dict(os.environ, PRE_COMMIT_HOME=str(pre_commit_home))
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env["PATH"]
    inst = subprocess.run([sys.executable, "-m", "pre_commit", "install"], cwd=repo, capture_output=True, text=True, env=env)
    assert inst.returncode == 0, inst.stdout + inst.stderr
    (repo / "train.py").write_text(BAD)
    git("add", "train.py", cwd=repo)
    p = commit(repo, env)
    assert p.returncode != 0 and "train.py:10:9: AMP002" in p.stdout + p.stderr
    (repo / "train.py").write_text(GOOD)
    git("add", "train.py", cwd=repo)
    assert commit(repo, env).returncode == 0
