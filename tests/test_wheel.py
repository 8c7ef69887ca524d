"""The wheel, installed into a fresh virtual environment outside the checkout, works on its own:
`amplint src/`, `amplint --explain`, the language-server entry point and, when the wheel ships
the fixtures, `amplint verify --device cpu`."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest
from helpers import CLIP_BEFORE_UNSCALE, ROOT

TRAIN = CLIP_BEFORE_UNSCALE


def _source_copy(dest: Path) -> Path:
    """The checkout's tracked and unignored files, copied (building never writes into it)."""
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True, text=True)
    if listed.returncode == 0 and listed.stdout.strip():
        for rel in listed.stdout.splitlines():
            src = ROOT / rel
            if src.is_file():
                (dest / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dest / rel)
    else:
        shutil.copytree(ROOT, dest, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns(".venv", ".git", "build", "*.egg-info", ".amplint_cache"))
    return dest


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    base = tmp_path_factory.mktemp("wheel")
    src = _source_copy(base / "src-copy")
    out = base / "dist"
    b = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(src)],
                       capture_output=True, text=True)
    assert b.returncode == 0, b.stdout + b.stderr
    wheel = next(out.glob("amplint-*.whl"))
    env_dir = base / "venv"
    venv.EnvBuilder(with_pip=True, clear=True).create(env_dir)
    bindir = env_dir / ("Scripts" if os.name == "nt" else "bin")
    i = subprocess.run([str(bindir / "python"), "-m", "pip", "install", "-q", str(wheel)], capture_output=True, text=True)
    assert i.returncode == 0, i.stdout + i.stderr
    project = base / "user-project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "train.py").write_text(TRAIN)
    return wheel, bindir, project


def _run(bindir, *args, cwd):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "AMPLINT_CACHE_DIR")}
    env["PATH"] = str(bindir) + os.pathsep + env.get("PATH", "")
    return subprocess.run([str(bindir / "amplint"), *args], capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=600)


def test_lint_outside_the_checkout(installed):
    _wheel, bindir, project = installed
    where = subprocess.run([str(bindir / "python"), "-c", "import amplint, sys; print(amplint.__file__)"],
                           capture_output=True, text=True, cwd=project)
    assert str(bindir.parent) in where.stdout and str(ROOT) not in where.stdout
    p = _run(bindir, "src/", cwd=project)
    assert p.returncode == 1, p.stderr
    assert p.stdout.splitlines()[0].startswith("src/train.py:10:9: AMP002 [*] Gradients are clipped while still scaled")
    assert "Found 1 error." in p.stdout


def test_explain_outside_the_checkout(installed):
    _wheel, bindir, project = installed
    p = _run(bindir, "--explain", "AMP002", cwd=project)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("# grad-use-before-unscale (AMP002)")
    assert "## Measured evidence" in p.stdout  # amplint/data/evidence.json is in the wheel


def test_server_entry_point_without_the_extra(installed):
    _wheel, bindir, project = installed
    p = _run(bindir, "server", "--stdio", cwd=project)
    assert p.returncode == 2 and "pip install 'amplint[lsp]'" in p.stderr


def test_verify_outside_the_checkout(installed):
    wheel, bindir, project = installed
    names = zipfile.ZipFile(wheel).namelist()
    if not any("/fixtures/" in n and n.endswith("/bad.py") for n in names):
        pytest.skip("this wheel ships no fixtures (they come with the harness's packaging, issue 15)")
    import importlib.util

    spec = importlib.util.find_spec("torch")
    if spec is None or spec.origin is None:
        pytest.skip("torch is not installed here (the runtime extra)")
    # torch for the fresh environment without downloading it again: the test environment's copy,
    # on the path after the fresh environment's own packages (its amplint is the wheel's)
    site = subprocess.run([str(bindir / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True).stdout.strip()
    Path(site, "zz_torch_from_test_env.pth").write_text(str(Path(spec.origin).parent.parent) + "\n")
    p = _run(bindir, "verify", "--device", "cpu", cwd=project)
    assert p.returncode == 0, p.stdout + p.stderr
