"""The harness ships: build the wheel, install it into a fresh venv outside the checkout, verify there.

The wheel is built from a copy of the sources (nothing is written into the checkout) and installed
with ``--no-deps`` into a venv made with ``--without-pip``; its dependencies (torch, libcst,
click) come from the test interpreter's site-packages through a ``.pth`` file, appended after the
venv's own site-packages, so the ``amplint`` that runs is the wheel's.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from helpers import ROOT

HAS_TORCH = importlib.util.find_spec("torch") is not None
pytestmark = [pytest.mark.runtime, pytest.mark.skipif(not HAS_TORCH, reason="needs torch (the runtime extra)")]

PASSING = {"CONFIRMED", "MECHANISM ONLY", "NEEDS CUDA", "NEEDS CPU HOST", "NEEDS DISTRIBUTED", "NO RUNTIME EFFECT"}


def _site_of(module: str) -> str:
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin, module
    return str(Path(spec.origin).resolve().parents[1])


def _clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    src.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    for name in ("amplint", "fixtures"):
        shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    dist = tmp / "dist"
    have_setuptools = importlib.util.find_spec("setuptools") is not None
    build = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(src)]
    if have_setuptools:
        build.insert(5, "--no-build-isolation")
    proc = subprocess.run(build, capture_output=True, text=True, timeout=600, env=_clean_env())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (wheel,) = dist.glob("amplint-*.whl")
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    py = venv / "bin" / "python"
    proc = subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "-q", "--no-deps",
                           "--no-index", str(wheel)], capture_output=True, text=True, timeout=300, env=_clean_env())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    purelib = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    deps = sorted({_site_of(m) for m in ("torch", "libcst", "click")} | {sysconfig.get_paths()["purelib"]})
    (Path(purelib) / "_amplint_test_deps.pth").write_text("\n".join(deps) + "\n")
    work = tmp / "elsewhere"  # outside the checkout, no fixtures/ here
    work.mkdir()
    return venv, Path(purelib), work, wheel


def run(venv: Path, work: Path, *args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run([str(venv / "bin" / "amplint"), *args], capture_output=True, text=True, cwd=work,
                          timeout=timeout, env=_clean_env())


def test_the_wheel_carries_the_fixtures(installed):
    venv, purelib, work, wheel = installed
    import zipfile

    names = set(zipfile.ZipFile(wheel).namelist())
    for code_dir in sorted(p for p in (ROOT / "fixtures").iterdir() if p.is_dir()):
        assert f"amplint/fixtures/{code_dir.name}/bad.py" in names and f"amplint/fixtures/{code_dir.name}/good.py" in names
    assert not any(n.startswith("fixtures/") for n in names)  # nothing lands at the top of site-packages
    probe = subprocess.run([str(venv / "bin" / "python"), "-c", "import amplint; print(amplint.__file__)"],
                           capture_output=True, text=True, cwd=work, env=_clean_env())
    assert Path(probe.stdout.strip()).resolve().is_relative_to(purelib.resolve()), probe.stdout + probe.stderr


def test_verify_from_the_installed_wheel(installed):
    venv, purelib, work, _wheel = installed
    proc = run(venv, work, "verify", "--device", "cpu", "--json", "v.json")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    data = json.loads((work / "v.json").read_text())
    assert Path(data["fixtures"]).resolve().is_relative_to(purelib.resolve())
    rules = {r["code"]: r for r in data["rules"]}
    assert len(rules) == len([p for p in (ROOT / "fixtures").iterdir() if p.is_dir()])
    for code, r in rules.items():
        assert r["verdict"] in PASSING, (code, r["verdict"], r["note"])
        assert set(r["traces"]) == {"bad", "good", "ref"}, code  # a verdict from this run's three runs
    assert rules["AMP902"]["verdict"] == "CONFIRMED"
    assert len(rules["AMP902"]["traces"]["bad"]["ranks"]) == 2


def test_update_evidence_never_writes_into_site_packages(installed):
    venv, purelib, work, _wheel = installed
    packaged = purelib / "amplint" / "data" / "evidence.json"
    before = packaged.read_bytes()
    proc = run(venv, work, "verify", "--device", "cpu", "--select", "AMP001", "--update-evidence")
    assert proc.returncode == 2 and "--evidence-file" in proc.stderr and "installed" in proc.stderr, proc.stderr
    proc = run(venv, work, "verify", "--device", "cpu", "--select", "AMP001", "--update-evidence",
               "--evidence-file", "ev.json", "-q")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads((work / "ev.json").read_text())
    assert list(data["rules"]) == ["AMP001"] and data["rules"]["AMP001"].startswith("Confirmed (")
    assert packaged.read_bytes() == before
