"""target-torch-version: from the configuration, else the project's declared torch requirement;
below 2.4 the AMP101 rewrite (which needs torch >= 2.4) is an unsafe fix."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from amplint.requirements import target_of_specifier

OLD = "import torch\n\nscaler = torch.cuda.amp.GradScaler()\n"
NEW = 'import torch\n\nscaler = torch.amp.GradScaler("cuda")\n'


def run(*args, cwd):
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([sys.executable, "-m", "amplint", "--no-cache", *args], capture_output=True, text=True,
                          cwd=cwd, env=env)


@pytest.mark.parametrize("declaration, name, fixed", [
    ('[project]\nname = "p"\ndependencies = ["torch==2.2.2", "numpy"]\n', "pyproject.toml", False),
    ('[project]\nname = "p"\ndependencies = ["torch>=2.4,<3"]\n', "pyproject.toml", True),
    ('[project]\nname = "p"\ndependencies = ["torch"]\n', "pyproject.toml", True),
    ('[project]\nname = "p"\n[project.optional-dependencies]\ngpu = ["torch~=2.3.1"]\n', "pyproject.toml", False),
    ('[tool.poetry.dependencies]\ntorch = "^2.1"\n', "pyproject.toml", False),
    ("numpy\ntorch<2.4  # old cluster\n", "requirements.txt", False),
    ("torchvision==0.15\n", "requirements.txt", True),  # not torch
    ("-r base.txt\ntorch==2.5.0 ; sys_platform == 'linux'\n", "requirements-gpu.txt", True),
])
def test_declared_requirement_decides_the_fix(tmp_path, declaration, name, fixed):
    (tmp_path / name).write_text(declaration)
    (tmp_path / "src").mkdir()
    f = tmp_path / "src" / "train.py"
    f.write_text(OLD)
    p = run("--fix", "src", cwd=tmp_path)
    assert f.read_text() == (NEW if fixed else OLD), p.stdout
    if not fixed:
        assert "1 hidden fix can be enabled with the `--unsafe-fixes` option." in p.stdout
        run("--fix", "--unsafe-fixes", "src", cwd=tmp_path)
        assert f.read_text() == NEW


def test_config_setting_wins_over_the_declaration(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "p"\ndependencies = ["torch==2.5"]\n\n[tool.amplint]\ntarget-torch-version = "2.2"\n')
    f = tmp_path / "train.py"
    f.write_text(OLD)
    run("--fix", "train.py", cwd=tmp_path)
    assert f.read_text() == OLD
    s = run("--show-settings", "train.py", cwd=tmp_path)
    assert f"target-torch-version: 2.2 (from {tmp_path / 'pyproject.toml'})" in s.stdout
    p = run("--fix", "--config", "target-torch-version = '2.4'", "train.py", cwd=tmp_path)
    assert f.read_text() == NEW, p.stdout + p.stderr
    bad = run("--config", "target-torch-version = 'latest'", "train.py", cwd=tmp_path)
    assert bad.returncode == 2 and "must be a version" in bad.stderr


def test_each_package_its_own_pin(tmp_path):
    for pkg, pin in (("old", "torch==2.2.2"), ("new", "torch==2.5.1")):
        (tmp_path / pkg).mkdir()
        (tmp_path / pkg / "requirements.txt").write_text(pin + "\n")
        (tmp_path / pkg / "train.py").write_text(OLD)
    run("--fix", "old", "new", cwd=tmp_path)
    assert (tmp_path / "old" / "train.py").read_text() == OLD
    assert (tmp_path / "new" / "train.py").read_text() == NEW


@pytest.mark.parametrize("spec, target", [
    ("==2.2.2", (2, 2, 2)), (">=2.1,<3", (2, 1)), ("~=2.3.0", (2, 3, 0)), ("^2.2", (2, 2)), (">2.3", (2, 3, 1)),
    ("<2.4", (2, 3, 10**6)), ("<=2.3.1", (2, 3, 1)), ("", None), ("==2.*", (2,)), ("@ https://x/torch.whl", None),
])
def test_specifiers(spec, target):
    assert target_of_specifier(spec) == target
    if target is not None and spec.startswith("<"):
        assert target < (2, 4)
