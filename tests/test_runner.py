"""Pool, cache and determinism: the same answer every time, whatever the jobs, order or cache."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest
from helpers import CASES, FIXTURES


def run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "amplint", "--isolated", "--exit-zero", *args], capture_output=True, text=True,
                          cwd=cwd)


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    d = tmp_path_factory.mktemp("tree")
    shutil.copytree(FIXTURES, d / "fixtures")
    shutil.copytree(CASES, d / "cases")
    return d


def test_output_is_byte_identical_across_runs_jobs_and_order(tree):
    a = run("--no-cache", "--select", "ALL", "--jobs", "1", "fixtures", "cases", cwd=tree).stdout
    b = run("--no-cache", "--select", "ALL", "--jobs", "2", "fixtures", "cases", cwd=tree).stdout
    c = run("--no-cache", "--select", "ALL", "--jobs", "2", "cases", "fixtures", cwd=tree).stdout
    d = run("--no-cache", "--select", "ALL", "--jobs", "1", "fixtures", "cases", cwd=tree).stdout
    assert a.count(": AMP") > 20
    assert a == b == c == d
    js1 = run("--no-cache", "--select", "ALL", "--output-format", "json", "--jobs", "1", ".", cwd=tree).stdout
    js2 = run("--no-cache", "--select", "ALL", "--output-format", "json", "--jobs", "2", ".", cwd=tree).stdout
    assert js1 == js2


def test_cache_hit_gives_identical_results(tree, tmp_path):
    cache = tmp_path / "cache"
    cold = run("--cache-dir", str(cache), "--select", "ALL", "--output-format", "json", ".", cwd=tree).stdout
    assert any(cache.glob("results-*.json"))
    warm = run("--cache-dir", str(cache), "--select", "ALL", "--output-format", "json", ".", cwd=tree).stdout
    nocache = run("--no-cache", "--select", "ALL", "--output-format", "json", ".", cwd=tree).stdout
    assert cold == warm == nocache
    assert (cache / ".gitignore").read_text().strip().endswith("*")


def test_cache_invalidated_by_file_change(tmp_path):
    f = tmp_path / "t.py"
    bad = (FIXTURES / "AMP001" / "bad.py").read_text()
    f.write_text(bad)
    cache = tmp_path / "cache"
    assert "AMP001" in run("--cache-dir", str(cache), str(f)).stdout
    f.write_text((FIXTURES / "AMP001" / "good.py").read_text())
    assert "AMP001" not in run("--cache-dir", str(cache), str(f)).stdout
    f.write_text(bad)
    assert "AMP001" in run("--cache-dir", str(cache), str(f)).stdout


def test_cache_invalidated_by_config_change(tmp_path):
    (tmp_path / "t.py").write_text((FIXTURES / "AMP001" / "bad.py").read_text())
    (tmp_path / "pyproject.toml").write_text("[tool.amplint]\n")
    args = ["--exit-zero", "--cache-dir", "cache", "t.py"]
    first = subprocess.run([sys.executable, "-m", "amplint", *args], capture_output=True, text=True, cwd=tmp_path)
    assert "AMP001" in first.stdout
    (tmp_path / "pyproject.toml").write_text('[tool.amplint]\nignore = ["AMP001"]\n')
    second = subprocess.run([sys.executable, "-m", "amplint", *args], capture_output=True, text=True, cwd=tmp_path)
    assert "AMP001" not in second.stdout


def test_cache_invalidated_by_amplint_change(tmp_path, monkeypatch):
    from amplint import config

    settings = config.build_settings([str(tmp_path)], config.CliOverrides(isolated=True), [])
    before = settings.fingerprint()
    monkeypatch.setattr(config, "__version__", "999.0", raising=False)
    import amplint

    monkeypatch.setattr(amplint, "__version__", "999.0")
    assert settings.fingerprint() != before
    monkeypatch.setattr(config, "_code_stamp", lambda: "another-build")
    assert settings.fingerprint() != before


def test_no_cache_writes_nothing(tmp_path):
    (tmp_path / "t.py").write_text("import torch\n")
    run("--no-cache", "t.py", cwd=tmp_path)
    assert not (tmp_path / ".amplint_cache").exists()


def test_unwritable_cache_dir_is_not_an_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    p = run("--cache-dir", str(blocker / "cache"), str(FIXTURES / "AMP001" / "bad.py"))
    assert p.returncode == 0 and "AMP001" in p.stdout
    assert "Traceback" not in p.stderr


def test_explicit_and_discovered_are_cached_apart(tmp_path):
    (tmp_path / "broken.py").write_text("def f(:\n")
    cache = tmp_path / "cache"
    assert "AMP000" not in run("--cache-dir", str(cache), ".", cwd=tmp_path).stdout
    assert "AMP000" in run("--cache-dir", str(cache), "broken.py", cwd=tmp_path).stdout
