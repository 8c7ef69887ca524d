"""--fix / --diff / --add-noqa go through the runner's worker pool and cache."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from test_config_hierarchy import BAD

OLD = "import torch\n\nscaler = torch.cuda.amp.GradScaler()\nwith torch.cuda.amp.autocast():\n    pass\n"


def run(*args, cwd):
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    env.pop("AMPLINT_CACHE_DIR", None)
    return subprocess.run([sys.executable, "-m", "amplint", "--isolated", *args], capture_output=True, text=True,
                          cwd=cwd, env=env)


def make_tree(root):
    root.mkdir()
    for i in range(40):
        (root / f"bad_{i:02}.py").write_text(BAD.replace("def train(", f"def train_{i}("))
        (root / f"old_{i:02}.py").write_text(OLD + f"x = {i}\n")
        (root / f"clean_{i:02}.py").write_text(f"import torch\n\ny = torch.ones({i})\n")


def snapshot(root):
    return {p.name: p.read_bytes() for p in sorted(root.iterdir()) if p.suffix == ".py"}


def test_parallel_fix_is_byte_identical_to_serial(tmp_path):
    make_tree(tmp_path / "a")
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    one = run("--fix", "--no-cache", "-v", "-j", "1", ".", cwd=tmp_path / "a")
    two = run("--fix", "--no-cache", "-v", "-j", "2", ".", cwd=tmp_path / "b")
    assert "(1 worker)" in one.stderr and "(2 workers)" in two.stderr, two.stderr
    assert snapshot(tmp_path / "a") == snapshot(tmp_path / "b")
    assert one.stdout == two.stdout
    assert "Found 160 errors (120 fixed, 40 remaining)." in one.stdout  # 40 AMP002 + 80 AMP101 fixed; AMP001 left
    assert (tmp_path / "a" / "old_07.py").read_text() == (
        'import torch\n\nscaler = torch.amp.GradScaler("cuda")\nwith torch.amp.autocast("cuda"):\n    pass\nx = 7\n')


def test_diff_and_add_noqa_in_parallel(tmp_path):
    make_tree(tmp_path / "a")
    d1 = run("--diff", "--no-cache", "-j", "1", ".", cwd=tmp_path / "a")
    d2 = run("--diff", "--no-cache", "-j", "2", ".", cwd=tmp_path / "a")
    assert d1.returncode == d2.returncode == 1 and d1.stdout == d2.stdout and d1.stdout.count("+++ ") == 80
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    n1 = run("--add-noqa", "--no-cache", "-j", "1", ".", cwd=tmp_path / "a")
    n2 = run("--add-noqa", "--no-cache", "-j", "2", ".", cwd=tmp_path / "b")
    assert n1.stderr == n2.stderr == "Added 160 noqa directives.\n"
    assert snapshot(tmp_path / "a") == snapshot(tmp_path / "b")


def test_fix_uses_the_cache(tmp_path):
    make_tree(tmp_path / "a")
    root = tmp_path / "a"
    run(".", cwd=root)  # warm the cache
    d = run("--diff", "-v", ".", cwd=root)
    # only the 80 files with a fix are read again; the 40 clean ones come from the cache
    assert "120 files, 40 from the cache, 80 linted" in d.stderr, d.stderr
    f = run("--fix", ".", cwd=root)
    assert "120 fixed" in f.stdout
    again = run("-v", ".", cwd=root)
    # the fixed files' new contents were recorded: a check after --fix reads nothing
    assert "120 files, 120 from the cache, 0 linted" in again.stderr, again.stderr
    assert again.stdout == run("--no-cache", ".", cwd=root).stdout
    n = run("--add-noqa", "-v", ".", cwd=root)
    assert "120 files, 80 from the cache, 40 linted" in n.stderr, n.stderr  # only the 40 with findings left
