"""Reliability (issue 19): each class of defect found by the red-team battery against 0.1.0, as
real runs on real files. The fault-injection suite (signals and races inside each step of the
write protocol) is tests/test_faults.py; the fuzz test is tests/test_fuzz_reliability.py."""

from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import stat
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BAD = (ROOT / "fixtures" / "AMP001" / "bad.py").read_bytes()
GOOD = (ROOT / "fixtures" / "AMP001" / "good.py").read_bytes()
FIXED = BAD.replace(b"        scaler.step(optimizer)  # error: AMP001\n",
                    b"        scaler.step(optimizer)  # error: AMP001\n        scaler.update()\n")
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


SETPRIV = shutil.which("setpriv")
# as root, permission bits bind only without the capabilities that override them
DROP_DAC = [SETPRIV, "--inh-caps=-all", "--bounding-set=-dac_override,-dac_read_search"] if SETPRIV else None
CAN_DROP = IS_ROOT and DROP_DAC is not None


def amplint(*args, cwd=None, stdin=None, env=None, no_dac=False, timeout=120):
    """Run amplint; ``no_dac``: as root without CAP_DAC_OVERRIDE (like any user: file
    permissions apply)."""
    full_env = dict(os.environ, **(env or {}))
    prefix = DROP_DAC if no_dac else []
    return subprocess.run([*prefix, sys.executable, "-m", "amplint", *args], cwd=cwd, input=stdin, capture_output=True,
                          timeout=timeout, env=full_env)


def ok(p) -> str:
    err = p.stderr.decode("utf-8", "replace")
    assert "Traceback" not in err, err
    return err


@pytest.fixture
def proj(tmp_path):
    d = tmp_path / "proj"
    d.mkdir()
    (d / "pyproject.toml").write_text("[tool.amplint]\n")
    return d


# --- 1. --fix never loses or damages user data ------------------------------------------------


@pytest.mark.skipif(not IS_ROOT, reason="needs root to give the file another owner")
def test_fix_keeps_owner_group_mode_and_xattrs(proj):
    f = proj / "train.py"
    f.write_bytes(BAD)
    os.chown(f, 12345, 23456)
    f.chmod(0o640)
    has_xattr = True
    try:
        os.setxattr(f, "user.origin", b"checkout")
    except OSError:
        has_xattr = False
    p = amplint("--no-cache", "--fix", "--unsafe-fixes", "train.py", cwd=proj)
    ok(p)
    assert p.returncode == 0 and f.read_bytes() == FIXED
    st = os.stat(f)
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (12345, 23456, 0o640)
    if has_xattr:
        assert os.getxattr(f, "user.origin") == b"checkout"


def _acl(uid: int) -> bytes:
    """A POSIX access ACL in the kernel's xattr format: user::rw- user:<uid>:rw- group::r-- mask::rw- other::---"""
    entries = [(0x01, 6, 0xFFFFFFFF), (0x02, 6, uid), (0x04, 4, 0xFFFFFFFF), (0x10, 6, 0xFFFFFFFF), (0x20, 0, 0xFFFFFFFF)]
    return struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *e) for e in entries)


def test_fix_keeps_the_acl(proj):
    f = proj / "train.py"
    f.write_bytes(BAD)
    f.chmod(0o660)
    try:
        os.setxattr(f, "system.posix_acl_access", _acl(4242))
    except OSError as e:
        pytest.skip(f"no POSIX ACLs here: {e}")
    before = os.getxattr(f, "system.posix_acl_access")
    p = amplint("--no-cache", "--fix", "--unsafe-fixes", "train.py", cwd=proj)
    ok(p)
    assert f.read_bytes() == FIXED
    assert os.getxattr(f, "system.posix_acl_access") == before


@pytest.mark.parametrize("mode", [0o444, 0o400])
def test_read_only_file_is_never_rewritten(proj, mode):
    f = proj / "train.py"
    f.write_bytes(BAD)
    f.chmod(mode)
    p = amplint("--no-cache", "--fix", "--unsafe-fixes", "train.py", cwd=proj)
    err = ok(p)
    assert f.read_bytes() == BAD
    assert p.returncode == 2
    assert "train.py: cannot write the fixes: Permission denied" in err
    assert "fixed" not in p.stdout.decode()
    assert stat.S_IMODE(os.stat(f).st_mode) == mode


@pytest.mark.skipif(not CAN_DROP, reason="needs root and setpriv to run without CAP_DAC_OVERRIDE")
def test_file_the_user_cannot_write_is_not_replaced_through_the_directory(proj):
    """The directory lets the user rename files; the file itself is not theirs to write."""
    f = proj / "train.py"
    f.write_bytes(BAD)
    os.chown(f, 12345, 12345)
    f.chmod(0o644)  # another user's, read-only for us
    p = amplint("--no-cache", "--fix", "--unsafe-fixes", "train.py", cwd=proj, no_dac=True)
    err = ok(p)
    assert f.read_bytes() == BAD and os.stat(f).st_uid == 12345
    assert p.returncode == 2 and "cannot write the fixes: Permission denied" in err
    assert not [n for n in os.listdir(proj) if n.startswith(".amplint")]


@pytest.mark.skipif(not CAN_DROP, reason="needs root and setpriv to run without CAP_DAC_OVERRIDE")
def test_writable_file_in_a_read_only_directory_is_fixed_in_place(proj):
    d = proj / "ro"
    d.mkdir()
    f = d / "train.py"
    f.write_bytes(BAD)
    f.chmod(0o666)
    os.chown(f, 12345, 12345)
    os.chown(d, 12345, 12345)
    d.chmod(0o755)  # no temporary file can be made here
    ino = os.stat(f).st_ino
    p = amplint("--no-cache", "--fix", "--unsafe-fixes", "ro/train.py", cwd=proj, no_dac=True)
    ok(p)
    assert p.returncode == 0 and f.read_bytes() == FIXED and os.stat(f).st_ino == ino


@pytest.mark.parametrize("length", [230, 240, 255])
def test_long_file_names_can_be_fixed(proj, length):
    name = "t" * (length - 3) + ".py"
    assert len(name.encode()) == length
    f = proj / name
    f.write_bytes(BAD)
    p = amplint("--no-cache", "--fix", "--unsafe-fixes", name, cwd=proj)
    ok(p)
    assert p.returncode == 0 and f.read_bytes() == FIXED
    assert sorted(os.listdir(proj)) == sorted(["pyproject.toml", name])


@pytest.mark.skipif(not IS_ROOT, reason="needs mount(2)")
def test_bind_mounted_single_file_is_fixed_in_place(proj, tmp_path):
    src = tmp_path / "outside_src.py"
    src.write_bytes(BAD)
    f = proj / "train.py"
    f.write_bytes(b"# mount point\n")
    if subprocess.run(["mount", "--bind", str(src), str(f)], capture_output=True).returncode != 0:
        pytest.skip("bind mounts are not allowed here")
    try:
        p = amplint("--no-cache", "--fix", "--unsafe-fixes", "train.py", cwd=proj)
        ok(p)
        assert p.returncode == 0
        assert f.read_bytes() == FIXED == src.read_bytes()
    finally:
        subprocess.run(["umount", str(f)], capture_output=True)
    assert f.read_bytes() == b"# mount point\n"


def test_sigterm_exits_like_sigint(proj):
    (proj / "train.py").write_bytes(BAD)
    ctl = proj.parent / "ctl"
    ctl.mkdir()
    env = dict(os.environ, AMPLINT_TEST_PAUSE="fix:read", AMPLINT_TEST_PAUSE_DIR=str(ctl))
    for sig, code in ((signal.SIGTERM, 143), (signal.SIGINT, 130), (signal.SIGHUP, 129)):
        for f in ctl.iterdir():
            f.unlink()
        proc = subprocess.Popen([sys.executable, "-m", "amplint", "--no-cache", "--fix", "."], cwd=proj, env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        while not (ctl / "fix-read.reached").exists():
            assert proc.poll() is None
            time.sleep(0.01)
        proc.send_signal(sig)
        _out, err = proc.communicate(timeout=60)
        assert proc.returncode == code
        assert err.decode() == "amplint: interrupted\n"


# --- 2. no writes outside the tree ------------------------------------------------------------


@pytest.fixture
def outside(tmp_path):
    o = tmp_path / "outside"
    o.mkdir()
    (o / "t.py").write_bytes(BAD)
    return o


def test_fix_never_follows_links_out_of_the_tree(proj, outside):
    (proj / "link.py").symlink_to(outside / "t.py")
    (proj / "linkdir").symlink_to(outside)
    (proj / "inside.py").write_bytes(BAD)
    p = amplint("--no-cache", "--fix", "--unsafe-fixes", ".", cwd=proj)
    err = ok(p)
    assert (outside / "t.py").read_bytes() == BAD
    assert (proj / "inside.py").read_bytes() == FIXED
    assert f"link.py: not linted: a symbolic link to a file outside the project ({outside / 't.py'})" in err
    assert f"linkdir: not linted: a symbolic link to a directory outside the project ({outside})" in err
    # named explicitly, the link is linted but still not fixed
    p = amplint("--no-cache", "--fix", "--unsafe-fixes", "link.py", cwd=proj)
    err = ok(p)
    assert p.returncode == 1 and "link.py:20:9: AMP001" in p.stdout.decode()
    assert f"link.py: not fixed: it resolves to {outside / 't.py'}, outside the project root" in err
    assert (outside / "t.py").read_bytes() == BAD
    p = amplint("--no-cache", "--diff", "--unsafe-fixes", "link.py", cwd=proj)
    assert p.stdout.decode().startswith("") and "+        scaler.update()" not in p.stdout.decode()


def test_findings_through_a_link_out_of_the_project_offer_no_fix(proj, outside):
    # they were marked `[*]` and counted as fixable, and then --fix left them alone
    (proj / "linkdir").symlink_to(outside)
    for _ in range(2):  # (the second run from the cache)
        p = amplint("--unsafe-fixes", "--output-format", "json", "linkdir", cwd=proj)
        ok(p)
        data = json.loads(p.stdout)
        assert data and all(d["fix"] is None for d in data)


@pytest.mark.parametrize("named", ["linkdir", "linkdir/t.py", "./linkdir/t.py"])
@pytest.mark.parametrize("mode", ["--fix", "--add-noqa"])
def test_a_folder_link_named_on_the_command_line_is_linted_not_written(proj, outside, named, mode):
    # a file under a linked folder named on the command line used to be fixed (and noqa-ed)
    # outside the project
    (proj / "linkdir").symlink_to(outside)
    p = amplint("--no-cache", mode, "--unsafe-fixes", named, cwd=proj) if mode == "--fix" else \
        amplint("--no-cache", mode, named, cwd=proj)
    err = ok(p)
    assert (outside / "t.py").read_bytes() == BAD
    assert "not fixed: it resolves to" in err


def test_links_inside_the_tree_are_followed(proj):
    (proj / "real").mkdir()
    (proj / "real" / "t.py").write_bytes(BAD)
    (proj / "alias.py").symlink_to("real/t.py")
    p = amplint("--no-cache", "--fix", "--unsafe-fixes", "alias.py", cwd=proj)
    ok(p)
    assert (proj / "real" / "t.py").read_bytes() == FIXED and (proj / "alias.py").is_symlink()


def test_dangling_gitignore_link_in_the_cache_is_not_followed(proj, tmp_path):
    target = tmp_path / "global-gitignore"
    cache = proj / ".amplint_cache"
    cache.mkdir()
    (cache / ".gitignore").symlink_to(target)
    (cache / "CACHEDIR.TAG").symlink_to(tmp_path / "tag-target")
    (proj / "train.py").write_bytes(BAD)
    p = amplint("train.py", cwd=proj)
    ok(p)
    assert p.returncode == 1
    assert not target.exists() and not (tmp_path / "tag-target").exists()
    assert (cache / ".gitignore").is_symlink()


def test_cache_directory_that_is_a_link_is_not_used(proj, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (proj / ".amplint_cache").symlink_to(elsewhere)
    (proj / "train.py").write_bytes(BAD)
    p = amplint("train.py", cwd=proj)
    err = ok(p)
    assert p.returncode == 1
    assert list(elsewhere.iterdir()) == []
    assert ".amplint_cache: not used as a cache: it is a symbolic link" in err


def test_cache_directory_holding_other_files_is_not_written(proj):
    """A repository cannot point the cache at its own sources (a `*` .gitignore would hide them)."""
    src = proj / "src"
    src.mkdir()
    (src / "model.py").write_text("x = 1\n")
    (proj / "pyproject.toml").write_text('[tool.amplint]\ncache-dir = "src"\n')
    (proj / "train.py").write_bytes(BAD)
    p = amplint("train.py", cwd=proj)
    err = ok(p)
    assert p.returncode == 1
    assert sorted(os.listdir(src)) == ["model.py"]
    assert "not used as a cache: the directory holds other files" in err


@pytest.mark.parametrize("value", ["..", "../cache", "ABSOLUTE", "sub/../../x", "."])
def test_repository_config_cannot_put_the_cache_outside(proj, value):
    hostile = proj.parent / "hostile-cache"
    value = str(hostile) if value == "ABSOLUTE" else value
    (proj / "pyproject.toml").write_text(f'[tool.amplint]\ncache-dir = "{value}"\n')
    (proj / "train.py").write_bytes(BAD)
    p = amplint("train.py", cwd=proj)
    err = ok(p)
    assert p.returncode == 2
    assert "`cache-dir` must be a directory inside the project" in err
    assert not hostile.exists()
    assert not (proj.parent / ".gitignore").exists() and not (proj.parent / "cache").exists()


@pytest.mark.parametrize("how", ["relative", "absolute"])
def test_a_config_extended_from_outside_cannot_put_the_cache_outside(proj, tmp_path, how):
    # the extended file's own folder used to be the bound: ``extend = "../evil/amplint.toml"``
    # holding ``cache-dir = "cache"`` put results and a `*` .gitignore in ../evil/cache
    (proj / ".git").mkdir()
    evil = tmp_path / "evil"
    evil.mkdir()
    (evil / "amplint.toml").write_text('cache-dir = "cache"\n')
    target = "../evil/amplint.toml" if how == "relative" else str(evil / "amplint.toml")
    (proj / "pyproject.toml").write_text(f'[tool.amplint]\nextend = "{target}"\n')
    (proj / "train.py").write_bytes(BAD)
    p = amplint("train.py", cwd=proj)
    assert p.returncode == 2 and "`cache-dir` must be a directory inside the project" in ok(p)
    assert sorted(os.listdir(evil)) == ["amplint.toml"]


def test_a_package_config_may_extend_the_repository_config_that_sets_the_cache(proj):
    (proj / ".git").mkdir()
    (proj / "pyproject.toml").write_text('[tool.amplint]\ncache-dir = ".amplint_c"\n')
    pkg = proj / "pkg"
    pkg.mkdir()
    (pkg / "pyproject.toml").write_text('[tool.amplint]\nextend = "../pyproject.toml"\n')
    (pkg / "train.py").write_bytes(BAD)
    p = amplint("pkg/train.py", cwd=proj)
    ok(p)
    assert p.returncode == 1 and (proj / ".amplint_c").is_dir()


def test_repository_config_cache_through_a_link_out_is_refused(proj, tmp_path):
    (tmp_path / "away").mkdir()
    (proj / "sub").symlink_to(tmp_path / "away")
    (proj / "pyproject.toml").write_text('[tool.amplint]\ncache-dir = "sub/cache"\n')
    (proj / "train.py").write_bytes(BAD)
    p = amplint("train.py", cwd=proj)
    assert p.returncode == 2 and "`cache-dir` must be a directory inside the project" in ok(p)
    assert list((tmp_path / "away").iterdir()) == []


def test_cache_elsewhere_from_the_command_line_or_environment(proj, tmp_path):
    (proj / "pyproject.toml").write_text(f'[tool.amplint]\ncache-dir = "{tmp_path / "hostile-cache"}"\n')
    (proj / "train.py").write_bytes(BAD)
    for args, env in (([f"--cache-dir={tmp_path / 'c1'}"], {}), ([], {"AMPLINT_CACHE_DIR": str(tmp_path / "c2")})):
        p = amplint(*args, "train.py", cwd=proj, env=env)
        ok(p)
        assert p.returncode == 1
    assert list((tmp_path / "c1").glob("results-*.json")) and list((tmp_path / "c2").glob("results-*.json"))
    assert (tmp_path / "c1" / "CACHEDIR.TAG").read_bytes().startswith(b"Signature: 8a477f597d28d172789f06886806bc55")


@pytest.mark.parametrize("kind", ["fifo", "zero", "random-link", "huge"])
def test_cache_files_are_read_only_when_regular_and_bounded(proj, kind, tmp_path):
    (proj / "train.py").write_bytes(BAD)
    first = amplint("train.py", cwd=proj)
    [results] = list((proj / ".amplint_cache").glob("results-*.json"))
    results.unlink()
    if kind == "fifo":
        os.mkfifo(results)
    elif kind == "zero":
        results.symlink_to("/dev/zero")
    elif kind == "random-link":
        results.symlink_to("/dev/urandom")
    else:
        with open(results, "wb") as f:
            f.truncate(300 * 1024 * 1024)  # sparse: not read at all
    p = amplint("train.py", cwd=proj, timeout=60)
    ok(p)
    assert p.stdout == first.stdout and p.returncode == 1


@pytest.mark.skipif(not IS_ROOT, reason="needs mount(2) for a full disk")
def test_full_disk_leaves_no_partial_cache_file(proj, tmp_path):
    disk = tmp_path / "disk"
    disk.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(disk)], capture_output=True).returncode:
        pytest.skip("cannot mount a tmpfs here")
    try:
        cache = disk / "cache"
        (proj / "train.py").write_bytes(BAD)
        amplint("--cache-dir", str(cache), "train.py", cwd=proj)
        fd = os.open(disk / "filler", os.O_WRONLY | os.O_CREAT)
        try:
            while True:
                os.write(fd, b"\0" * 4096)
        except OSError as e:
            assert e.errno == errno.ENOSPC
        finally:
            os.close(fd)
        for n in range(3):
            (proj / f"t{n}.py").write_bytes(BAD + f"# {n}\n".encode() * 2000)
            p = amplint("--cache-dir", str(cache), ".", cwd=proj)
            ok(p)
            assert p.returncode == 1
            assert sorted(os.listdir(cache)) == sorted([".gitignore", "CACHEDIR.TAG"] + [n for n in os.listdir(cache)
                                                                                       if n.startswith("results-")])
            assert not [n for n in os.listdir(cache) if n.startswith(".")  and n != ".gitignore"]
    finally:
        subprocess.run(["umount", str(disk)], capture_output=True)


# --- 3. the cache answers only for the file it was computed for ---------------------------------


def test_same_name_same_size_same_mtime_in_two_folders(proj):
    a, b = proj / "a", proj / "b"
    a.mkdir()
    b.mkdir()
    pad = len(BAD) - len(GOOD)
    good = GOOD + b"#" * (pad - 1) + b"\n" if pad > 0 else GOOD
    bad = BAD if pad > 0 else BAD + b"#" * (-pad - 1) + b"\n"
    assert len(good) == len(bad)
    (a / "train.py").write_bytes(good)
    (b / "train.py").write_bytes(bad)
    t = time.time_ns() - 10**10
    for f in (a / "train.py", b / "train.py"):
        os.utime(f, ns=(t, t))
    p1 = amplint("train.py", cwd=a)
    assert p1.returncode == 0, p1.stdout
    p2 = amplint("train.py", cwd=b)
    assert p2.returncode == 1 and b"AMP001" in p2.stdout, "a real AMP001 must not be answered from a's entry"


def test_content_hit_respects_per_file_ignores(proj):
    (proj / "pyproject.toml").write_text('[tool.amplint]\nper-file-ignores = { "legacy/*" = ["AMP001"] }\n')
    (proj / "legacy").mkdir()
    (proj / "legacy" / "train.py").write_bytes(BAD)
    # from inside legacy/, the file is "train.py" on the command line, ignored by its config
    assert amplint("train.py", cwd=proj / "legacy").returncode == 0
    (proj / "train.py").write_bytes(BAD)  # the same bytes and the same name: other settings
    p = amplint("train.py", cwd=proj)
    assert p.returncode == 1 and b"train.py:20:9: AMP001" in p.stdout
    assert amplint("train.py", cwd=proj / "legacy").returncode == 0


def test_content_key_is_blake2b_and_carries_the_file_settings():
    import hashlib

    from amplint.runner import content_key

    assert content_key(b"abc", "fk") == hashlib.blake2b(b"abc", digest_size=32).hexdigest() + ":fk"
    assert content_key(b"abc", "fk") != content_key(b"abc", "other")


def test_fingerprint_covers_python_and_libcst(monkeypatch):
    from amplint import config

    settings = config.build_settings([], config.CliOverrides(isolated=True), [])
    before = settings.fingerprint()
    monkeypatch.setattr(config, "_PLATFORM", None)
    monkeypatch.setattr(config.sys, "version", "3.12.0 (another interpreter)")
    assert settings.fingerprint() != before
    monkeypatch.setattr(config, "_PLATFORM", None)
    monkeypatch.undo()
    config._PLATFORM = None
    assert settings.fingerprint() == before
    import libcst  # noqa: F401 - only to find its version file

    version_file = Path(libcst.__file__).parent / "_version.py"
    assert version_file.exists()


def test_cache_equals_no_cache_under_edits_moves_copies_and_config_changes(proj):
    """A random walk of changes; after each, the cached answer equals --no-cache."""
    import random

    from amplint.config import CliOverrides, build_settings
    from amplint.rules import all_rules
    from amplint.runner import run

    rng = random.Random(19)
    srcs = [BAD, GOOD, FIXED, BAD.replace(b"optimizer", b"opt_____"), GOOD.replace(b"optimizer", b"opt_____")]
    (proj / "pkg").mkdir()
    for i in range(4):
        (proj / "pkg" / f"m{i}.py").write_bytes(rng.choice(srcs))
    cwd = os.getcwd()
    os.chdir(proj)
    try:
        def answer(use_cache: bool):
            settings = build_settings(["."], CliOverrides(), all_rules())
            return [(r.path, sorted((d.code, d.location.row, d.message) for d in r.diagnostics), r.warnings)
                    for r in run(["."], settings, jobs=1, use_cache=use_cache)]

        # scripted first: a same-size edit that keeps the mtime (rsync -t, cp -p, a quick
        # branch switch), and an edit within the same second as the cached read
        f = proj / "pkg" / "m0.py"
        f.write_bytes(BAD)
        answer(True)
        st = os.stat(f)
        f.write_bytes(BAD.replace(b"optimizer", b"opt_____"))
        os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
        assert answer(True) == answer(False)
        f.write_bytes(BAD)
        answer(True)
        f.write_bytes(GOOD + b"#" * (len(BAD) - len(GOOD) - 1) + b"\n")
        assert answer(True) == answer(False)
        for step in range(40):
            files = sorted((proj / "pkg").glob("*.py"))
            op = rng.choice(["edit-same-size", "edit", "copy", "move", "touch", "config", "restore-mtime"])
            f = rng.choice(files)
            st = os.stat(f)
            if op == "edit-same-size":
                data = f.read_bytes()
                other = [s for s in srcs if len(s) == len(data) and s != data]
                if other:
                    f.write_bytes(rng.choice(other))
                    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))  # same size, same mtime
            elif op == "edit":
                f.write_bytes(rng.choice(srcs))
            elif op == "copy":
                shutil.copy2(f, proj / "pkg" / f"c{step}.py")
            elif op == "move":
                f.rename(proj / "pkg" / f"mv{step}.py")
            elif op == "touch":
                os.utime(f)
            elif op == "restore-mtime":
                f.write_bytes(f.read_bytes())
                os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
            else:
                pattern = rng.choice(["pkg/m*.py", "pkg/c*.py", "*", "pkg/mv*.py"])
                (proj / "pyproject.toml").write_text(
                    f'[tool.amplint]\nper-file-ignores = {{ "{pattern}" = ["AMP001"] }}\n' if rng.random() < 0.7
                    else "[tool.amplint]\n")
            cached = answer(True)
            assert cached == answer(False), (step, op)
            assert answer(True) == cached
    finally:
        os.chdir(cwd)


# --- 4. no silent gaps, no order dependence ---------------------------------------------------


@pytest.mark.skipif(not CAN_DROP, reason="needs root and setpriv to run without CAP_DAC_READ_SEARCH")
def test_unreadable_directory_is_a_diagnostic(proj):
    (proj / "ok.py").write_bytes(GOOD)
    secret = proj / "secret"
    secret.mkdir()
    (secret / "train.py").write_bytes(BAD)
    secret.chmod(0o000)
    try:
        p = amplint("--no-cache", ".", cwd=proj, no_dac=True)
    finally:
        secret.chmod(0o755)
    ok(p)
    assert p.returncode == 1
    assert "secret:1:1: AMP000 cannot read the directory: Permission denied" in p.stdout.decode()
    assert "All checks passed!" not in p.stdout.decode()


@pytest.mark.skipif(not CAN_DROP, reason="needs root and setpriv to run without CAP_DAC_READ_SEARCH")
@pytest.mark.parametrize("named", ["secret/train.py", "secret"])
def test_unreadable_path_named_on_the_command_line_is_a_diagnostic(proj, named):
    # it used to stop the whole run with a usage error (exit 2) before any other path was linted
    (proj / "other.py").write_bytes(BAD)
    secret = proj / "secret"
    secret.mkdir()
    (secret / "train.py").write_bytes(BAD)
    target = proj / named
    target.chmod(0o000)
    try:
        p = amplint("--no-cache", "other.py", named, cwd=proj, no_dac=True)
    finally:
        target.chmod(0o755 if target.is_dir() else 0o644)
    ok(p)
    out = p.stdout.decode()
    assert p.returncode == 1
    assert f"{named}:1:1: AMP000 cannot read the" in out and "other.py:" in out and "AMP001" in out


def test_path_longer_than_path_max_is_a_diagnostic(tmp_path):
    top = tmp_path / "deep"
    top.mkdir()
    fd = os.open(top, os.O_RDONLY)
    name = "d" * 250
    try:
        for _ in range(18):  # 18 * 251 > PATH_MAX (4096)
            os.mkdir(name, dir_fd=fd)
            nfd = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = nfd
        wfd = os.open("train.py", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(wfd, BAD)
        os.close(wfd)
    finally:
        os.close(fd)
    p = amplint("--no-cache", "--isolated", "deep", cwd=tmp_path)
    ok(p)
    out = p.stdout.decode()
    assert p.returncode == 1 and "All checks passed!" not in out
    assert ": AMP000 cannot read the directory: File name too long" in out


@pytest.mark.parametrize("line, key", [
    ('force-exclude = "false"', "force-exclude"),
    ("force-exclude = 1", "force-exclude"),
    ('select = "AMP001"', "select"),
    ("ignore = [1]", "ignore"),
    ('exclude = "build"', "exclude"),
    ("extend-exclude = {}", "extend-exclude"),
    ("per-file-ignores = []", "per-file-ignores"),
    ('per-file-ignores = { "x" = "AMP001" }', "per-file-ignores"),
    ("cache-dir = 5", "cache-dir"),
    ('cache-dir = ""', "cache-dir"),
    ("max-file-size = true", "max-file-size"),
    ('scaler-names = "scaler"', "scaler-names"),
    ("eval-function-patterns = [true]", "eval-function-patterns"),
    ("extend-select = [[]]", "extend-select"),
    # empty selectors and globs: ``select = [""]`` used to turn every rule off without a word
    ('select = [""]', "select: an empty rule selector"),
    ('ignore = [" "]', "ignore: an empty rule selector"),
    ('extend-select = [""]', "extend-select: an empty rule selector"),
    ('per-file-ignores = { "train.py" = [""] }', "per-file-ignores: an empty rule selector"),
    ('per-file-ignores = { "" = ["AMP001"] }', "an empty glob pattern"),
])
def test_every_config_key_is_type_checked(proj, line, key):
    """``key``: the key the error names (as `key`), or the words it says."""
    (proj / "pyproject.toml").write_text(f"[tool.amplint]\n{line}\n")
    (proj / "train.py").write_bytes(BAD)
    p = amplint("--no-cache", "train.py", cwd=proj)
    err = ok(p)
    says = key if " " in key else f"`{key}"
    assert p.returncode == 2 and says in err, err


def test_force_exclude_false_is_false(proj):
    (proj / "pyproject.toml").write_text('[tool.amplint]\nforce-exclude = false\nextend-exclude = ["train.py"]\n')
    (proj / "train.py").write_bytes(BAD)
    assert amplint("--no-cache", "train.py", cwd=proj).returncode == 1
    (proj / "pyproject.toml").write_text('[tool.amplint]\nforce-exclude = true\nextend-exclude = ["train.py"]\n')
    assert amplint("--no-cache", "train.py", cwd=proj).returncode == 0


def test_output_independent_of_path_order_and_repetition(proj):
    d = proj / "d"
    d.mkdir()
    (d / "broken.py").write_text("def f(:\n")
    (d / "train.py").write_bytes(BAD)
    (d / "sub").mkdir()
    (d / "sub" / "t.py").write_bytes(BAD)
    runs = [amplint("--no-cache", *args, cwd=proj) for args in (
        ["d", "d/broken.py"], ["d/broken.py", "d"], ["d/broken.py", "d", "d", "./d"], ["d/sub", "d", "d/broken.py"],
        ["./d/broken.py", "d/sub/../", "d"])]
    for p in runs:
        ok(p)
    outs = {p.stdout for p in runs}
    assert len(outs) == 1, outs
    out = runs[0].stdout.decode()
    assert "d/broken.py:1:7: AMP000" in out and out.count("d/train.py:20:9: AMP001") == 1
    assert out.count("d/sub/t.py:20:9: AMP001") == 1


def test_output_independent_of_the_order_of_two_projects(tmp_path):
    for name, ignore in (("p1", '["AMP001"]'), ("p2", "[]")):
        d = tmp_path / name
        d.mkdir()
        (d / "pyproject.toml").write_text(f"[tool.amplint]\nignore = {ignore}\n")
        (d / "train.py").write_bytes(BAD)
    a = amplint("--no-cache", "p1", "p2", cwd=tmp_path)
    b = amplint("--no-cache", "p2", "p1", cwd=tmp_path)
    assert a.stdout == b.stdout and a.returncode == b.returncode


# --- 5. output is printable and valid ---------------------------------------------------------

HOSTILE_NAMES = {
    "esc": "t\x1b]52;c;ZWNobyBwd25lZA==\x07\x1b[31m.py",
    "newline": "t.py:1:1: AMP999 forged\nx.py",
    "cr": "t\rAMP000.py",
    "bidi": "t\u202eyp.py",
    "not-utf8": os.fsdecode(b"t\xff\xfe.py"),
}


@pytest.fixture
def hostile(tmp_path):
    d = tmp_path / "hostile"
    d.mkdir()
    body = BAD.replace(b"import torch\n", b"import torch  # \x1b]52;c;cGF5bG9hZA==\x07 \x1b[2J\n", 1)
    body = body.replace(b"        scaler.step(optimizer)", b"        scaler.step(optimizer)  # \x1b[31mred\x1b[0m \x07")
    for key, name in HOSTILE_NAMES.items():
        (d / os.fsencode(name).decode("utf-8", "surrogateescape")).write_bytes(body)
    return d


@pytest.mark.parametrize("fmt", ["concise", "full", "github"])
def test_terminal_formats_escape_control_characters(hostile, fmt):
    p = amplint("--no-cache", "--isolated", "--output-format", fmt, ".", cwd=hostile)
    ok(p)
    out = p.stdout
    for bad in (b"\x1b", b"\x07", b"\r", "\u202e".encode()):
        assert bad not in out, (fmt, bad)
    text = out.decode("utf-8")  # valid UTF-8 even for a name that is not
    if fmt == "concise":
        lines = [ln for ln in text.splitlines() if ": AMP" in ln]
        assert len(lines) == len(HOSTILE_NAMES), "one line per finding: no forged lines"
        assert all(ln.endswith("before the next step") for ln in lines)
        assert "t\\x1b]52;c;ZWNobyBwd25lZA==\\x07\\x1b[31m.py:20:9: AMP001" in text
        assert "t.py:1:1: AMP999 forged\\nx.py:20:9: AMP001" in text
        assert "t\\xff\\xfe.py:20:9: AMP001" in text
    if fmt == "full":
        assert "\\x1b[31mred\\x1b[0m \\x07" in text
    if fmt == "github":
        assert len([ln for ln in text.splitlines() if ln.startswith("::error ")]) == len(HOSTILE_NAMES)


def test_full_format_carets_stay_under_the_finding_after_escapes(tmp_path):
    src = b"import torch\nscaler = torch.amp.GradScaler('cuda')\nx = '\x1b'; scaler.step(opt)\n"
    (tmp_path / "t.py").write_bytes(src)
    p = amplint("--no-cache", "--isolated", "--output-format", "full", "t.py", cwd=tmp_path)
    lines = p.stdout.decode().splitlines()
    code = next(ln for ln in lines if ln.startswith("3 | "))
    carets = lines[lines.index(code) + 1]
    start = carets.index("^")
    assert code[start:].startswith("scaler.step(opt)")


def _strict_json(text: bytes):
    data = json.loads(text.decode("utf-8"))  # strict UTF-8

    def walk(v):
        if isinstance(v, str):
            v.encode("utf-8")  # no lone surrogates
        elif isinstance(v, list):
            for x in v:
                walk(x)
        elif isinstance(v, dict):
            for k, x in v.items():
                walk(k)
                walk(x)

    walk(data)
    return data


@pytest.mark.parametrize("fmt", ["json", "json-lines", "sarif"])
def test_machine_formats_are_valid_for_any_name(hostile, fmt):
    p = amplint("--no-cache", "--isolated", "--output-format", fmt, ".", cwd=hostile)
    ok(p)
    if fmt == "json-lines":
        records = [_strict_json(line) for line in p.stdout.splitlines()]
    else:
        records = _strict_json(p.stdout)
    if fmt == "json":
        names = sorted(Path(r["filename"]).name for r in records)
        assert os.fsencode(HOSTILE_NAMES["not-utf8"]) == b"t\xff\xfe.py"
        assert "t\\xff\\xfe.py" in names, "the lossless escaped form"
        assert HOSTILE_NAMES["esc"] in names and HOSTILE_NAMES["newline"] in names
    if fmt == "sarif":
        uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in records["runs"][0]["results"]]
        # relative to %SRCROOT% (issue 16's GitHub-ready SARIF), the bytes percent-encoded
        assert any(u.split("/")[-1] == "t%FF%FE.py" for u in uris)


def test_lossless_json_name_round_trip():
    from amplint.printable import json_name

    def decode(s: str) -> bytes:
        out = bytearray()
        i = 0
        while i < len(s):
            if s[i] == "\\" and s[i + 1] == "\\":
                out += b"\\"
                i += 2
            elif s[i] == "\\" and s[i + 1] == "x":
                out.append(int(s[i + 2:i + 4], 16))
                i += 4
            else:
                out += s[i].encode()
                i += 1
        return bytes(out)

    for raw in (b"a\xffb.py", b"back\\slash\xfe.py", b"caf\xc3\xa9\xff.py"):
        name = os.fsdecode(raw)
        assert decode(json_name(name)) == raw
    assert json_name("plain\\name.py") == "plain\\name.py"


def test_stdin_filename_is_escaped(tmp_path):
    p = amplint("--no-cache", "--isolated", "--stdin-filename", "x\x1b[2J\n.py", "-", stdin=BAD, cwd=tmp_path)
    assert b"\x1b" not in p.stdout and b"x\\x1b[2J\\n.py:20:9: AMP001" in p.stdout


# --- 6. bounded work --------------------------------------------------------------------------


def _peak_mb(args, cwd) -> tuple[int, float, subprocess.CompletedProcess]:
    """Peak RSS (MB) of one amplint process, from its own rusage."""
    code = ("import resource, subprocess, sys, json\n"
            "p = subprocess.run(json.loads(sys.argv[1]), capture_output=True)\n"
            "sys.stdout.write(json.dumps([resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, p.returncode,"
            " p.stdout.decode('utf-8', 'replace'), p.stderr.decode('utf-8', 'replace')]))\n")
    cmd = [sys.executable, "-m", "amplint", *args]
    out = subprocess.run([sys.executable, "-c", code, json.dumps(cmd)], cwd=cwd, capture_output=True, timeout=300)
    rss, rc, so, se = json.loads(out.stdout)
    return rss // 1024, rc, subprocess.CompletedProcess(cmd, rc, so.encode(), se.encode())


@pytest.mark.parametrize("suffix", [".py", ".ipynb"])
def test_files_over_max_file_size_are_not_read(tmp_path, suffix):
    f = tmp_path / f"huge{suffix}"
    with open(f, "wb") as h:
        h.write(b"import torch\nscaler = torch.amp.GradScaler('cuda')\n")
        h.truncate(400 * 1024 * 1024)  # sparse
    for args in (["--no-cache", "--isolated", f.name], ["--no-cache", "--isolated", "--fix", f.name], ["--isolated", "."]):
        mb, rc, p = _peak_mb(args, tmp_path)
        assert rc == 0
        assert f"{f.name}: not analysed: 400.0 MB is over `max-file-size` (2.0 MB)" in p.stderr.decode()
        assert mb < 150, f"{mb} MB: the file was read"


def test_a_file_with_more_syntax_nodes_than_max_file_size_allows_is_not_analysed(tmp_path):
    # LibCST's cost follows the nodes, not the bytes: a 578 KB dict of ``"k": scaler.scale(i)``
    # took 12 s and 620 MB under the 2 MB byte limit, 1,350 small training functions (408 KB) 22 s;
    # one node per 52 bytes of the limit is allowed
    body = BAD.decode()
    (tmp_path / "pyproject.toml").write_text('[tool.amplint]\nmax-file-size = "104KB"\n')  # 2,048 nodes
    (tmp_path / "dense.py").write_text(body + "X = {" + ", ".join(f'"k{i}": f({i})' for i in range(1000)) + "}\n")
    (tmp_path / "literal.py").write_text(body + "X = {" + ", ".join(f'"k{i}": ({i}, -{i})' for i in range(2000)) + "}\n")
    p = amplint("--no-cache", "dense.py", "literal.py", cwd=tmp_path)
    err = ok(p)
    assert "dense.py: not analysed: " in err and "syntax nodes is over the 2,048 that `max-file-size` (0.1 MB)" in err
    # a constant literal counts as one node (its elements are blanked before LibCST)
    assert p.returncode == 1 and b"literal.py:" in p.stdout and b"dense.py:" not in p.stdout


def test_large_literal_is_cheap_and_positions_stay(tmp_path):
    table = "DATA = [" + ", ".join(str(i) for i in range(150_000)) + "]\n"
    multi = "TABLE = {\n" + "".join(f"    'k{i}': ({i}, -{i}.5, None),  # row {i}\n" for i in range(12_000)) + "}\n"
    src = "import torch\n" + table + multi + BAD.decode().split("import torch\n", 1)[1]
    (tmp_path / "t.py").write_text(src)
    assert len(src) < 2 * 1024 * 1024
    mb, rc, p = _peak_mb(["--no-cache", "--isolated", "--output-format", "json", "t.py"], tmp_path)
    assert rc == 1
    [d] = json.loads(p.stdout)
    row = src.splitlines().index("        scaler.step(optimizer)  # error: AMP001") + 1
    assert (d["code"], d["location"]["row"], d["location"]["column"]) == ("AMP001", row, 9)
    assert mb < 500, f"{mb} MB"
    p = amplint("--no-cache", "--isolated", "--fix", "--unsafe-fixes", "t.py", cwd=tmp_path)
    assert p.returncode == 0
    assert (tmp_path / "t.py").read_text() == src.replace("        scaler.step(optimizer)  # error: AMP001\n",
                                                          "        scaler.step(optimizer)  # error: AMP001\n"
                                                          "        scaler.update()\n")


def test_literal_blanking_keeps_code_after_the_literal():
    import ast

    from amplint.engine import lint_source
    from amplint.literals import blank_large_literals

    lit = "[" + ", ".join(str(i) for i in range(5000)) + "]"
    src = "import torch\nscaler = torch.amp.GradScaler('cuda')\nfor b in loader:\n" \
          f"    x = {lit}; scaler.scale(b).backward(); scaler.step(opt)\n"
    text, rows = blank_large_literals(src, ast.parse(src))
    assert rows == [(4, 4)] and len(text) == len(src)
    assert text.index("scaler.step") == src.index("scaler.step")
    [d] = lint_source(src, "t.py")
    assert (d.code, d.location.row, d.location.column) == ("AMP001", 4, src.splitlines()[3].index("scaler.step") + 1)


def test_many_cell_notebook_maps_findings(tmp_path):
    cells = [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
              "source": "import torch\nscaler = torch.amp.GradScaler('cuda')\n"}]
    for i in range(3000):
        cells.append({"cell_type": "markdown" if i % 3 == 0 else "code", "metadata": {}, "source": f"x{i} = {i}\n"})
    cells.append({"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                  "source": "for b in loader:\n    scaler.scale(b).backward()\n    scaler.step(opt)\n"})
    (tmp_path / "nb.ipynb").write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    p = amplint("--no-cache", "--isolated", "nb.ipynb", cwd=tmp_path)
    assert p.returncode == 1 and "nb.ipynb:cell 3002:3:5: AMP001" in p.stdout.decode()


# --- 7. notebooks -----------------------------------------------------------------------------

TRAIN = ("import torch\n\ndef train(model, opt, batches):\n    scaler = torch.amp.GradScaler('cuda')\n"
         "    for x, y in batches:\n        with torch.autocast('cuda', dtype=torch.float16):\n"
         "            loss = model(x)\n        scaler.scale(loss).backward()\n        scaler.step(opt)\n")


def _nb(cells, **kw) -> str:
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, **kw)


def _code(source, **extra):
    return {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": source, **extra}


@pytest.mark.parametrize("variant", ["form-feed", "u2028", "crlf", "cr", "vt"])
def test_cells_read_as_python_reads_them(tmp_path, variant):
    src = {
        "form-feed": TRAIN.replace("    for x", "\x0c    for x"),
        "u2028": TRAIN.replace("loss = model(x)", "loss = model(x)  # note\u2028more"),
        "crlf": TRAIN.replace("\n", "\r\n"),
        "cr": TRAIN.replace("\n", "\r"),
        "vt": TRAIN.replace("loss = model(x)", "loss = model(x)  # a\x0bb"),
    }[variant]
    (tmp_path / "t.py").write_bytes(src.encode())
    (tmp_path / "t.ipynb").write_text(_nb([_code(src.splitlines(True))]))
    py = json.loads(amplint("--no-cache", "--isolated", "--output-format", "json", "t.py", cwd=tmp_path).stdout)
    nb = json.loads(amplint("--no-cache", "--isolated", "--output-format", "json", "t.ipynb", cwd=tmp_path).stdout)
    assert [(d["code"], d["location"]) for d in nb] == [(d["code"], d["location"]) for d in py] != []
    assert nb[0]["code"] == "AMP001"


def test_invalid_cells_are_diagnostics_and_the_rest_is_linted(tmp_path):
    cells = [_code("import torch\nscaler = torch.amp.GradScaler('cuda')\n"), ["not", "a", "cell"],
             {"cell_type": "heading", "source": "x", "metadata": {}}, {"cell_type": "code", "metadata": {}},
             _code([1, 2]), {"source": "x"},
             _code("for b in loader:\n    scaler.scale(b).backward()\n    scaler.step(opt)\n")]
    (tmp_path / "t.ipynb").write_text(_nb(cells))
    data = json.loads(amplint("--no-cache", "--isolated", "--output-format", "json", "t.ipynb", cwd=tmp_path).stdout)
    got = [(d["code"], d["cell"], d["message"]) for d in data]
    assert got == [
        ("AMP000", 2, "not a valid notebook cell: a cell must be a JSON object"),
        ("AMP000", 3, "not a valid notebook cell: unknown `cell_type` 'heading' (expected code, markdown or raw)"),
        ("AMP000", 4, "not a valid notebook cell: a cell needs a `source`"),
        ("AMP000", 5, "not a valid notebook cell: the cell's `source` holds something other than text"),
        ("AMP000", 6, "not a valid notebook cell: a cell needs a `cell_type`"),
        ("AMP001", 7, "`scaler.step(opt)` is not followed by `scaler.update()` before the next step"),
    ]


@pytest.mark.parametrize("where", ["top", "cell", "metadata"])
def test_duplicate_keys_are_diagnostics_and_never_fixed(tmp_path, where):
    text = _nb([_code(TRAIN.splitlines(True))], indent=1)
    if where == "top":
        text = text.replace('"nbformat": 4', '"nbformat": 4, "nbformat": 3')
    elif where == "cell":
        text = text.replace('"outputs": []', '"outputs": [], "source": ["x = 1\\n"]')
    else:
        text = text.replace('"metadata": {}', '"metadata": {"a": 1, "a": 2}', 1)
    f = tmp_path / "t.ipynb"
    f.write_text(text)
    p = amplint("--no-cache", "--isolated", "--fix", "--unsafe-fixes", "t.ipynb", cwd=tmp_path)
    assert p.returncode == 1 and "AMP000 not a valid notebook: duplicate key" in p.stdout.decode()
    assert f.read_text() == text


@pytest.mark.parametrize("style", ["jupyter", "ascii-escapes", "indent-2", "string-source", "tabs"])
def test_notebook_fix_changes_only_the_fix(tmp_path, style):
    other = "# caf\u00e9 \u2028 na\u00efve \u2014 untouched\nx = 'tab\\there'\n\n\n"
    fixed_cell = TRAIN + "\n\n"  # trailing blank lines stay
    cells = [{"cell_type": "markdown", "metadata": {}, "source": ["# r\u00e9sum\u00e9\n", "text"]},
             _code(other.splitlines(True)), _code(fixed_cell.splitlines(True)), _code("y = 'z\u00e9'")]
    kw = {"indent": 1, "ensure_ascii": False}
    if style == "ascii-escapes":
        kw["ensure_ascii"] = True
    elif style == "indent-2":
        kw["indent"] = 2
    elif style == "string-source":
        cells[2]["source"] = fixed_cell
    elif style == "tabs":
        kw["indent"] = "\t"
    text = _nb(cells, **kw) + "\n"
    f = tmp_path / "t.ipynb"
    f.write_text(text, encoding="utf-8")
    p = amplint("--no-cache", "--isolated", "--fix", "--unsafe-fixes", "t.ipynb", cwd=tmp_path)
    ok(p)
    assert p.returncode == 0
    new = f.read_text(encoding="utf-8")
    # every byte outside the fixed cell's source is the original's
    key = '"source": '
    anchor = text.index("def train")
    start = text.rindex(key, 0, anchor) + len(key)
    end_old = text.index("]" if style != "string-source" else '"', anchor if style != "string-source" else start + 1)
    if style == "string-source":
        end_old = start + len(json.dumps(fixed_cell, ensure_ascii=kw["ensure_ascii"]))
    assert new[:start] == text[:start]
    tail = text[end_old:]
    assert new.endswith(tail)
    cell = json.loads(new)["cells"][2]["source"]
    cell_text = "".join(cell) if isinstance(cell, list) else cell
    assert cell_text == TRAIN + "        scaler.update()\n" + "\n\n"
    if style == "jupyter":
        old_items = text[start:end_old]
        new_items = new[start:len(new) - len(tail)]
        assert new_items.replace(',\n    "        scaler.update()\\n"', "") == old_items


@pytest.mark.parametrize("shape", ["no-final-newline", "crlf", "magics", "string"])
def test_notebook_fix_edits_round_trip(tmp_path, shape):
    from amplint.diagnostics import Edit, Location
    from amplint.fixer import apply_edits

    src = {"no-final-newline": TRAIN.rstrip("\n"), "crlf": TRAIN.replace("\n", "\r\n"),
           "magics": "%load_ext autoreload\n" + TRAIN.replace("    for x", "    !nvidia-smi\n    for x"),
           "string": TRAIN}[shape]
    source = src if shape == "string" else src.splitlines(True)
    f = tmp_path / "t.ipynb"
    f.write_text(_nb([{"cell_type": "markdown", "metadata": {}, "source": "m"}, _code(source)], indent=1))
    data = json.loads(amplint("--no-cache", "--isolated", "--unsafe-fixes", "--output-format", "json", "t.ipynb",
                              cwd=tmp_path).stdout)
    [d] = data
    assert d["cell"] == 2
    edits = [Edit(e["content"], Location(**e["location"]), Location(**e["end_location"])) for e in d["fix"]["edits"]]
    expect = apply_edits(src, edits)
    amplint("--no-cache", "--isolated", "--unsafe-fixes", "--fix", "t.ipynb", cwd=tmp_path)
    got = json.loads(f.read_text())["cells"][1]["source"]
    assert ("".join(got) if isinstance(got, list) else got) == expect
    assert "scaler.update()" in expect


# --- 8. CLI -----------------------------------------------------------------------------------


def test_ctrl_c_in_a_parallel_run_exits_130_quietly(tmp_path):
    d = tmp_path / "many"
    d.mkdir()
    for i in range(80):
        (d / f"t{i}.py").write_bytes(BAD + f"# {i}\n".encode())
    ctl = tmp_path / "ctl"
    ctl.mkdir()
    env = dict(os.environ, AMPLINT_TEST_PAUSE="run:worker", AMPLINT_TEST_PAUSE_DIR=str(ctl))
    proc = subprocess.Popen([sys.executable, "-m", "amplint", "--no-cache", "--isolated", "--jobs", "2", "many"],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    deadline = time.monotonic() + 60
    while not (ctl / "run-worker.reached").exists():
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.01)
    os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C does: the whole process group
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert err.decode() == "amplint: interrupted\n", err.decode()
    assert b"AMP001" not in out


def test_fix_diff_on_stdin_prints_only_the_diff():
    p = amplint("--no-cache", "--isolated", "--fix", "--diff", "--unsafe-fixes", "--stdin-filename", "t.py", "-",
                stdin=BAD)
    out = p.stdout.decode()
    assert out.startswith("--- t.py\n+++ t.py\n@@"), out[:200]
    assert "+        scaler.update()\n" in out and p.returncode == 1
    assert "import torch\n" not in out.split("@@", 1)[0]


@pytest.mark.parametrize("args", [["--add-noqa", "-"], ["--add-noqa", "--stdin-filename", "t.py"]])
def test_add_noqa_on_stdin_is_a_usage_error(proj, args):
    # it printed "Added 0 noqa directives." and exited 0 with findings in the input
    p = amplint("--no-cache", *args, cwd=proj, stdin=BAD)
    assert p.returncode == 2 and "--add-noqa writes the directives into files" in ok(p)


def test_fix_with_add_noqa_is_a_usage_error(proj):
    (proj / "train.py").write_bytes(BAD)
    p = amplint("--no-cache", "--fix", "--add-noqa", "train.py", cwd=proj)
    assert p.returncode == 2 and "--add-noqa cannot be used with --fix" in ok(p)
    assert (proj / "train.py").read_bytes() == BAD


@pytest.mark.parametrize("comment, where", [
    ("# noqa:", "line"), ("# noqa:   ", "line"), ("# noqa AMP001", "line"), ("# noqa: AMP-001", "line"),
    ("# noqa: AMP001x", "line"), ("# amplint: noqa AMP001", "file"), ("# amplint: noqa: AMP-001", "file"),
    ("# amplint: noqa:", "file"), ("# amplint noqa", "file"),
    # a selector where codes belong, another separator in place of the colon
    ("# noqa AMP", "line"), ("# noqa ALL", "line"), ("# noqa=AMP002", "line"), ("# noqa.AMP002", "line"),
    ("# noqa - AMP002", "line"), ("# amplint: noqa AMP", "file"), ("# amplint: noqa ALL", "file"),
    ("# amplint: noqa=AMP002", "file"),
])
def test_malformed_noqa_is_reported_and_silences_nothing(proj, comment, where):
    src = BAD.decode()
    if where == "line":
        src = src.replace("scaler.step(optimizer)  # error: AMP001", f"scaler.step(optimizer)  {comment}")
    else:
        src = comment + "\n" + src
    (proj / "train.py").write_text(src)
    p = amplint("--no-cache", "train.py", cwd=proj)
    err = ok(p)
    assert p.returncode == 1 and b"AMP001" in p.stdout
    assert "invalid noqa directive, it suppresses nothing" in err


@pytest.mark.parametrize("comment", ["# noqa", "# noqa: AMP001", "# NOQA:AMP001,E501", "# noqa: AMP001 (reason)",
                                     "# noqa  because of reasons", "# noqa Amplint is wrong here"])
def test_well_formed_noqa_still_silences(proj, comment):
    src = BAD.decode().replace("scaler.step(optimizer)  # error: AMP001", f"scaler.step(optimizer)  {comment}")
    (proj / "train.py").write_text(src)
    p = amplint("--no-cache", "train.py", cwd=proj)
    assert p.returncode == 0 and "invalid noqa" not in ok(p)


@pytest.mark.parametrize("code, construct", [
    ("class A(x=1, *bases):\n    pass\n", "a class definition with a keyword argument before a `*` base"),
    ("(x): int = 1\n", "an annotated assignment to a parenthesized name"),
])
def test_libcst_limits_are_said_plainly(proj, code, construct):
    src = "import torch\nscaler = torch.amp.GradScaler('cuda')\n" + code
    compile(src, "t.py", "exec")  # CPython accepts it
    (proj / "t.py").write_text(src)
    p = amplint("--no-cache", "t.py", cwd=proj)
    out = p.stdout.decode()
    assert "t.py:3:1: AMP000 LibCST, the parser amplint uses, cannot parse " + construct in out
    assert f"which Python {sys.version_info.major}.{sys.version_info.minor} accepts" in out
    assert "SyntaxError" not in out


@pytest.mark.parametrize("extra, row", [
    ("(x): int = 1\n", None),  # at module level, after the training loop
    ("def helper():\n    n = 1\n    if n: (y): int = 2\n    return n\n", 3),
    ("@decorate\nclass A(x=1, *bases):\n    pass\n", 2),  # (reported on the class line, read as pass from the decorator)
    ("X = (" + " ".join(f'"s{i}"' for i in range(20000)) + ")\n", None),  # LibCST's parser gives up here
])
def test_the_rest_of_a_file_is_analysed_around_a_statement_libcst_rejects(proj, extra, row):
    # the whole file used to be given up for one statement LibCST's grammar rejects: a real AMP001
    # beside it was lost
    src = BAD.decode() + extra
    compile(src, "t.py", "exec")
    (proj / "t.py").write_text(src)
    p = amplint("--no-cache", "--output-format", "json", "t.py", cwd=proj)
    ok(p)
    found = {(d["code"], d["location"]["row"]) for d in json.loads(p.stdout)}
    step_row = BAD.decode().splitlines().index("        scaler.step(optimizer)  # error: AMP001") + 1
    assert ("AMP001", step_row) in found
    first = len(BAD.decode().splitlines()) + (row or 1)
    [limit] = [d for d in json.loads(p.stdout) if d["code"] == "AMP000"]
    assert limit["location"]["row"] == first and "read as `pass`, the rest of the file analysed" in limit["message"]


@pytest.mark.parametrize("newline", ["\r", "\r\n", "mixed"])
def test_noqa_rows_with_old_mac_line_endings(proj, newline):
    """Found by the long fuzz run: with lone ``\\r`` line endings the comments were tokenized as
    one line, and every directive after the first ``\\r`` sat on the wrong row."""
    src = BAD.decode().replace("scaler.step(optimizer)  # error: AMP001", "scaler.step(optimizer)  # noqa: AMP001")
    if newline == "mixed":
        lines = src.split("\n")
        src = "".join(line + ("\r" if i % 2 else "\n") for i, line in enumerate(lines[:-1]))
    else:
        src = src.replace("\n", newline)
    (proj / "train.py").write_bytes(src.encode())
    p = amplint("--no-cache", "--extend-select", "AMP900", "train.py", cwd=proj)
    assert p.returncode == 0, p.stdout


@pytest.mark.parametrize("module", ["json", "ast", "tokenize", "string", "textwrap", "libcst"])
def test_a_module_named_like_a_lazy_import_beside_the_code_never_runs(proj, module):
    # ``python -m amplint`` puts the current folder first on sys.path; amplint imports these
    # lazily, so a ``json.py`` in the linted folder used to run in their place (exit 0, no findings)
    (proj / "train.py").write_bytes(BAD)
    marker = proj / "RAN"
    (proj / f"{module}.py").write_text(f"open({str(marker)!r}, 'w').write('x')\nraise SystemExit(0)\n")
    p = amplint("--no-cache", "train.py", cwd=proj)
    ok(p)
    assert not marker.exists()
    assert p.returncode == 1 and b"AMP001" in p.stdout


@pytest.mark.skipif(shutil.which("patch") is None, reason="needs patch(1)")
@pytest.mark.parametrize("variant", ["no final newline", "cr", "crlf", "lf"])
def test_diff_applies_with_patch_to_what_fix_writes(proj, variant):
    # a last line without "\n" had no "\ No newline at end of file" marker (the "-" line ran into
    # the "+" line, and patch rejected the diff); "\r" line ends were split as lines
    src = BAD
    if variant == "no final newline":
        src = src.rstrip(b"\n")
    elif variant == "cr":
        src = src.replace(b"\n", b"\r")
    elif variant == "crlf":
        src = src.replace(b"\n", b"\r\n")
    (proj / "train.py").write_bytes(src)
    (proj / "copy.py").write_bytes(src)
    p = amplint("--no-cache", "--diff", "--unsafe-fixes", "train.py", cwd=proj)
    ok(p)
    assert p.returncode == 1 and p.stdout.endswith(b"\n")
    (proj / "d.patch").write_bytes(p.stdout)
    r = subprocess.run(["patch", "--binary", "--quiet", "copy.py", "d.patch"], cwd=proj, capture_output=True)
    assert r.returncode == 0, r.stdout + r.stderr
    amplint("--no-cache", "--fix", "--unsafe-fixes", "train.py", cwd=proj)
    assert (proj / "copy.py").read_bytes() == (proj / "train.py").read_bytes() != src
