"""Issue 16's parallel --fix and per-file configuration together with issue 19's reliability
guarantees: the write protocol holds in pool workers (an editor's save wins, a read-only file is
never rewritten, a link out of the tree is not followed, SIGTERM leaves no torn or temporary
file), and the cache of each configuration answers exactly what --no-cache answers."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BAD = (ROOT / "fixtures" / "AMP001" / "bad.py").read_bytes()
FIXED = BAD.replace(b"        scaler.step(optimizer)  # error: AMP001\n",
                    b"        scaler.step(optimizer)  # error: AMP001\n        scaler.update()\n")
EDITOR = BAD + b"# saved by the editor while amplint was fixing\n"
N = 70  # enough files for the runner to use the pool (64 or more)


def _env(**extra) -> dict:
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", **extra)
    env.pop("AMPLINT_CACHE_DIR", None)
    return env


def amplint(*args, cwd):
    return subprocess.run([sys.executable, "-m", "amplint", *args], cwd=cwd, capture_output=True, env=_env(),
                          timeout=300)


def _temps(d: Path) -> list[str]:
    return sorted(p.name for p in d.rglob("*") if p.name.startswith((".amplint-tmp", ".results-")))


def _tree(d: Path) -> list[Path]:
    d.mkdir()
    (d / "pyproject.toml").write_text("[tool.amplint]\n")
    files = []
    for i in range(N):
        f = d / f"t{i:02}.py"
        f.write_bytes(BAD)
        files.append(f)
    return files


def _wait(proc, marker: Path) -> None:
    deadline = time.monotonic() + 120
    while not marker.exists():
        if proc.poll() is not None:
            out, err = proc.communicate()
            pytest.fail(f"amplint ended first: {proc.returncode}\n{out.decode()}\n{err.decode()}")
        assert time.monotonic() < deadline, "pause point never reached"
        time.sleep(0.01)


def test_parallel_fix_keeps_the_write_protocol(tmp_path):
    d = tmp_path / "proj"
    files = _tree(d)
    files[3].chmod(0o444)
    outside = tmp_path / "outside.py"
    outside.write_bytes(BAD)
    (d / "link.py").symlink_to(outside)
    p = amplint("--no-cache", "--fix", "--unsafe-fixes", "-v", "-j", "2", ".", cwd=d)
    err = p.stderr.decode()
    assert "Traceback" not in err
    assert "(2 workers)" in err, err
    assert p.returncode == 2, err
    assert "t03.py: cannot write the fixes: Permission denied" in err
    assert "link.py: not linted: a symbolic link to a file outside the project" in err
    assert files[3].read_bytes() == BAD and outside.read_bytes() == BAD
    assert all(f.read_bytes() == FIXED for k, f in enumerate(files) if k != 3)
    assert _temps(d) == []


def test_parallel_fix_leaves_an_editor_save_alone(tmp_path):
    d = tmp_path / "proj"
    _tree(d)
    ctl = tmp_path / "ctl"
    ctl.mkdir()
    env = _env(AMPLINT_TEST_PAUSE="fix:replace", AMPLINT_TEST_PAUSE_DIR=str(ctl))
    proc = subprocess.Popen([sys.executable, "-m", "amplint", "--no-cache", "--fix", "--unsafe-fixes", "-j", "2", "."],
                            cwd=d, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    marker = ctl / "fix-replace.reached"
    _wait(proc, marker)
    time.sleep(0.05)  # the marker is written whole (a rename), but a second worker may overwrite it
    paused = Path(marker.read_text().splitlines()[1])  # the resolved path of a file a worker holds
    with open(paused, "r+b") as h:  # the editor saves in place
        h.write(EDITOR)
        h.truncate()
    (ctl / "fix-replace.go").touch()
    out, err = proc.communicate(timeout=300)
    assert "Traceback" not in err.decode()
    assert paused.read_bytes() == EDITOR, "the editor's save wins"
    assert f"{paused.name}: changed while amplint was fixing it" in err.decode()
    others = [f for f in sorted(d.glob("t*.py")) if f.resolve() != paused.resolve()]
    assert len(others) == N - 1 and all(f.read_bytes() in (FIXED, EDITOR) for f in others)
    assert _temps(d) == []


def test_sigterm_during_a_parallel_fix(tmp_path):
    """The parent stops the pool; each worker finishes or undoes the replacement it is in and
    ends quietly: every file is the original or the fixed one, no temporary file is left."""
    d = tmp_path / "proj"
    files = _tree(d)
    ctl = tmp_path / "ctl"
    ctl.mkdir()
    env = _env(AMPLINT_TEST_PAUSE="fix:replace", AMPLINT_TEST_PAUSE_DIR=str(ctl))
    proc = subprocess.Popen([sys.executable, "-m", "amplint", "--no-cache", "--fix", "--unsafe-fixes", "-j", "2", "."],
                            cwd=d, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _wait(proc, ctl / "fix-replace.reached")
    proc.send_signal(signal.SIGTERM)
    _out, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signal.SIGTERM, err.decode()
    assert err.decode() == "amplint: interrupted\n", err.decode()
    assert all(f.read_bytes() in (BAD, FIXED) for f in files)
    assert BAD in [f.read_bytes() for f in files], "the paused replacement was undone"
    assert _temps(d) == []
    again = amplint("--no-cache", "--fix", "--unsafe-fixes", "-j", "2", ".", cwd=d)
    assert again.returncode == 0 and all(f.read_bytes() == FIXED for f in files)


def test_each_configuration_its_cache_equal_to_no_cache(tmp_path):
    """Two packages with their own configuration and the same file (equal size and mtime, as a
    fresh clone gives them): each package's cache answers for its own files only, run after run,
    and a parallel --fix through the caches fixes what --no-cache would."""
    for pkg, ignored in (("a", "AMP001"), ("b", "AMP002")):
        (tmp_path / pkg).mkdir()
        (tmp_path / pkg / "pyproject.toml").write_text(f'[tool.amplint]\nignore = ["{ignored}"]\n')
        for i in range(40):
            (tmp_path / pkg / f"t{i:02}.py").write_bytes(BAD)
    t = time.time() - 60
    for f in tmp_path.rglob("t*.py"):
        os.utime(f, (t, t))
    expected = amplint("--no-cache", "--output-format", "json", "a", "b", cwd=tmp_path).stdout
    assert {(Path(r["filename"]).parent.name, r["code"]) for r in json.loads(expected)} == {("b", "AMP001")}
    for _ in range(3):
        assert amplint("--output-format", "json", "b", "a", cwd=tmp_path).stdout == expected
    assert len(list((tmp_path / "a" / ".amplint_cache").glob("results-*.json"))) == 1
    assert len(list((tmp_path / "b" / ".amplint_cache").glob("results-*.json"))) == 1
    p = amplint("--fix", "--unsafe-fixes", "-j", "2", "a", "b", cwd=tmp_path)
    assert p.returncode == 0, p.stderr.decode()
    assert all(f.read_bytes() == BAD for f in (tmp_path / "a").glob("t*.py"))  # AMP001 ignored there
    assert all(f.read_bytes() == FIXED for f in (tmp_path / "b").glob("t*.py"))
    assert amplint("a", "b", cwd=tmp_path).stdout == amplint("--no-cache", "a", "b", cwd=tmp_path).stdout


def test_a_worker_killed_mid_run_does_not_hang_the_run(tmp_path):
    """A worker that dies abruptly (the OOM killer, a kill from outside) does not leave the parent
    waiting for ever for its batch: the files no worker finished are linted again and the
    findings are complete, with a warning saying what happened."""
    d = tmp_path / "proj"
    _tree(d)
    ctl = tmp_path / "ctl"
    ctl.mkdir()
    env = _env(AMPLINT_TEST_PAUSE="run:worker", AMPLINT_TEST_PAUSE_DIR=str(ctl))
    proc = subprocess.Popen([sys.executable, "-m", "amplint", "--no-cache", "-j", "2", "--output-format", "json", "."],
                            cwd=d, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    marker = ctl / "run-worker.reached"
    _wait(proc, marker)
    os.kill(int(marker.read_text().splitlines()[0]), signal.SIGKILL)
    (ctl / "run-worker.go").touch()
    out, err = proc.communicate(timeout=120)
    assert "Traceback" not in err.decode()
    assert proc.returncode == 1, err.decode()
    assert "a worker process ended abruptly (killed by SIGKILL)" in err.decode()
    found = sorted((Path(x["filename"]).name, x["code"]) for x in json.loads(out))
    assert found == [(f"t{i:02}.py", "AMP001") for i in range(N)]
