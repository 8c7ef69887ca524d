"""Writing files honestly: the ``--fix`` write protocol, and amplint's own files.

**Fixing a user's file** (:func:`read_snapshot`, then :func:`replace_file`):

1. The file is read through its resolved path, with an identity: device, inode, size,
   ``mtime_ns``, ``ctime_ns``, and the bytes themselves.
2. The file must be writable by the user: it is opened for writing (the kernel's answer, ACLs,
   read-only mounts and immutable flags included); as root, a file without any write bit is
   refused too. Nothing is written otherwise.
3. The fixed bytes go to a new temporary file in the same directory, created with
   ``O_CREAT|O_EXCL|O_NOFOLLOW`` under a short name (``.amplint-tmp-<pid>-<random>``, within
   ``NAME_MAX`` whatever the file's own name), locked with ``flock`` while it lives, given the
   original's owner, group, mode and extended attributes (POSIX ACLs are extended attributes),
   then ``fsync``-ed.
4. Just before the replacement the file must still be what was read (same identity, same bytes);
   otherwise the temporary file is removed and the file is left alone with a warning (an editor
   saved it, or it was deleted: it is never re-created).
5. The replacement is an atomic exchange (``renameat2(RENAME_EXCHANGE)`` where the kernel has
   it, else ``rename``); after an exchange the file that was taken out is checked once more and,
   if it is not the one read (an editor saved in the last microseconds), exchanged back.
6. Where a new inode would change the file (a hard link, an owner or group the user cannot give,
   extended attributes that cannot be copied) or a rename is impossible (a bind-mounted single
   file: ``EBUSY``), the file is rewritten in place instead, after the same identity check.

SIGINT, SIGTERM and SIGHUP are deferred across these steps (:mod:`amplint.signals`): before the
replacement they abort it (the original stays), after it they wait for the cleanup. A SIGKILL
can leave a temporary file (never a torn file, except in the in-place fallback); the next run
removes it (:func:`sweep`: a temporary file whose lock is free and whose writer is gone).

**amplint's own files** (the cache): every file is created with ``O_CREAT|O_EXCL|O_NOFOLLOW``
relative to an open descriptor of a directory amplint owns (never through a symbolic link), and
read only when it is a regular file under a size bound.
"""

from __future__ import annotations

import errno
import os
import stat
import time
from typing import Iterable

from . import faults, signals
from ._record import Record

TEMP_PREFIX = ".amplint-tmp-"
_LEGACY_SUFFIX = ".amplint-tmp"  # amplint 0.1.0 named its temporary files .NAME.XXXXXXXX.amplint-tmp
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_RENAME_EXCHANGE = 2
_STALE_AFTER_S = 60.0  # a temporary file of a live process is kept this long before its lock


class FileChanged(Exception):
    """The file is no longer what was read: left alone."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason  # "changed" | "deleted"


class FileTooLarge(OSError):
    def __init__(self, size: int, limit: int, path: str = "") -> None:
        super().__init__(errno.EFBIG, "file too large", path)
        self.size, self.limit = size, limit


class Snapshot(Record):
    """What was read, and the identity it was read with."""

    __slots__ = _fields = ("path", "dev", "ino", "size", "mtime_ns", "ctime_ns", "mode", "uid", "gid", "nlink", "data")
    path: str  # the resolved path
    dev: int
    ino: int
    size: int
    mtime_ns: int
    ctime_ns: int
    mode: int
    uid: int
    gid: int
    nlink: int
    data: bytes


_TEMP_RE = None


def is_temp_name(name: str) -> bool:
    """amplint's temporary names: ``.amplint-tmp-<pid>-<8 hex>``, and 0.1.0's
    ``.NAME.XXXXXXXX.amplint-tmp`` (``tempfile.mkstemp``'s eight characters)."""
    global _TEMP_RE
    if not name.startswith("."):
        return False
    if not (name.startswith(TEMP_PREFIX) or name.endswith(_LEGACY_SUFFIX)):
        return False
    if _TEMP_RE is None:
        import re

        _TEMP_RE = re.compile(r"\.amplint-tmp-[0-9]+-[0-9a-f]{8}|\..+\.[a-z0-9_]{8}\.amplint-tmp", re.S)
    return _TEMP_RE.fullmatch(name) is not None


def _read_fd(fd: int, size_hint: int, limit: int | None = None) -> bytes:
    chunks = []
    total = 0
    while True:
        chunk = os.read(fd, max(size_hint + 1, 1 << 16))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
        if limit is not None and total > limit:
            raise FileTooLarge(total, limit)
    return b"".join(chunks)


def read_snapshot(path: str | os.PathLike, limit: int | None = None) -> Snapshot:
    """Read a regular file with its identity (a FIFO or device raises ``OSError`` unread; a file
    over ``limit`` bytes raises :class:`FileTooLarge` before it is read)."""
    real = os.path.realpath(path)
    for _attempt in range(3):
        fd = os.open(real, os.O_RDONLY | _NONBLOCK | _NOFOLLOW | _CLOEXEC)
        try:
            st = os.fstat(fd)
            if stat.S_ISDIR(st.st_mode):
                raise IsADirectoryError(errno.EISDIR, "Is a directory", str(path))
            if not stat.S_ISREG(st.st_mode):
                raise OSError(errno.EINVAL, "not a regular file", str(path))
            if limit is not None and st.st_size > limit:
                raise FileTooLarge(st.st_size, limit, str(path))
            data = _read_fd(fd, st.st_size, limit)
            after = os.fstat(fd)
        finally:
            os.close(fd)
        if (after.st_size, after.st_mtime_ns, after.st_ctime_ns) == (st.st_size, st.st_mtime_ns, st.st_ctime_ns) \
                and len(data) == st.st_size:
            return Snapshot(real, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns,
                            stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid, st.st_nlink, data)
        time.sleep(0.01)  # written while being read: read it again
    raise FileChanged("changed")


def _same(st: os.stat_result, snap: Snapshot, ctime: bool = True) -> bool:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns) == (snap.dev, snap.ino, snap.size, snap.mtime_ns) \
        and (not ctime or st.st_ctime_ns == snap.ctime_ns)


def _still(dir_fd: int, base: str, snap: Snapshot, ctime: bool = True) -> str | None:
    """None when ``base`` is still exactly the snapshot; else why not ("changed"/"deleted")."""
    try:
        fd = os.open(base, os.O_RDONLY | _NONBLOCK | _NOFOLLOW | _CLOEXEC, dir_fd=dir_fd)
    except FileNotFoundError:
        return "deleted"
    except OSError:
        return "changed"  # replaced by a symbolic link, a FIFO...
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or not _same(st, snap, ctime):
            return "changed"
        return None if _read_fd(fd, st.st_size) == snap.data else "changed"
    finally:
        os.close(fd)


# --- renameat2 ------------------------------------------------------------------------------

_LIBC = None


def _exchange(dir_fd: int, a: str, b: str) -> bool:
    """Atomically swap the names ``a`` and ``b``; False where the kernel or the filesystem
    cannot (the caller renames instead)."""
    global _LIBC
    if not hasattr(os, "fsencode") or os.name != "posix":  # pragma: no cover
        return False
    if _LIBC is None:
        try:
            import ctypes

            lib = ctypes.CDLL(None, use_errno=True)
            fn = lib.renameat2
            fn.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint)
            fn.restype = ctypes.c_int
            _LIBC = (ctypes, fn)
        except (OSError, AttributeError):
            _LIBC = False
    if _LIBC is False:
        return False
    ctypes, fn = _LIBC
    if fn(dir_fd, os.fsencode(a), dir_fd, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, getattr(errno, "EOPNOTSUPP", errno.ENOTSUP)):
        return False
    raise OSError(err, os.strerror(err), b)


def _rename(dir_fd: int, a: str, b: str) -> None:
    os.rename(a, b, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)


# --- temporary files ------------------------------------------------------------------------


def _create_temp(dir_fd: int) -> tuple[str, int]:
    import fcntl

    for _ in range(64):
        name = f"{TEMP_PREFIX}{os.getpid()}-{os.urandom(4).hex()}"
        try:
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o600, dir_fd=dir_fd)
        except FileExistsError:
            continue
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            here = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            here = None
        mine = os.fstat(fd)
        if here is not None and (here.st_dev, here.st_ino) == (mine.st_dev, mine.st_ino):
            return name, fd
        os.close(fd)  # removed by a concurrent sweep between create and lock: take another
    raise OSError(errno.EEXIST, "cannot create a temporary file")


def _unlink_quiet(dir_fd: int, name: str) -> None:
    try:
        os.unlink(name, dir_fd=dir_fd)
    except OSError:
        pass


def _write_all(fd: int, data: bytes, offset: int | None = None) -> None:
    view = memoryview(data)
    pos = 0
    while pos < len(view):
        if offset is None:
            n = os.write(fd, view[pos:])
        else:
            n = os.pwrite(fd, view[pos:], offset + pos)
        pos += n


def _copy_metadata(src_fd: int, dst_fd: int, snap: Snapshot) -> bool:
    """Give the new inode the original's owner, group, mode and extended attributes. False when
    one of them cannot be reproduced (the caller rewrites in place instead)."""
    try:
        mine = os.fstat(dst_fd)
        if (mine.st_uid, mine.st_gid) != (snap.uid, snap.gid):
            os.fchown(dst_fd, snap.uid if mine.st_uid != snap.uid else -1, snap.gid if mine.st_gid != snap.gid else -1)
        os.fchmod(dst_fd, snap.mode)
        if hasattr(os, "listxattr"):
            try:
                names = os.listxattr(src_fd)
            except OSError as e:
                if e.errno not in (errno.ENOTSUP, getattr(errno, "EOPNOTSUPP", errno.ENOTSUP)):
                    return False
                names = []
            for name in names:
                os.setxattr(dst_fd, name, os.getxattr(src_fd, name))
        got = os.fstat(dst_fd)
        return (got.st_uid, got.st_gid, stat.S_IMODE(got.st_mode)) == (snap.uid, snap.gid, snap.mode)
    except OSError:
        return False


def _open_for_writing(dir_fd: int, base: str, snap: Snapshot) -> int:
    """The permission check: a descriptor on the original opened for writing. Raises
    ``PermissionError`` (or ``EROFS``...) when the user cannot write the file."""
    if os.geteuid() == 0 and not snap.mode & 0o222:
        raise PermissionError(errno.EACCES, "Permission denied (the file is read-only)", snap.path)
    fd = os.open(base, os.O_WRONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC, dir_fd=dir_fd)
    st = os.fstat(fd)
    if (st.st_dev, st.st_ino) != (snap.dev, snap.ino):
        os.close(fd)
        raise FileChanged("changed")
    return fd


def replace_file(snap: Snapshot, data: bytes) -> str:
    """Replace the file read as ``snap`` with ``data`` (the protocol above). Returns "renamed" or
    "in-place"; raises :class:`FileChanged` (left alone) or ``OSError`` (cannot write)."""
    directory, base = os.path.split(snap.path)
    dir_fd = os.open(directory or ".", os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    try:
        with signals.critical():
            why = _still(dir_fd, base, snap)
            if why is not None:
                raise FileChanged(why)
            wfd = _open_for_writing(dir_fd, base, snap)
            try:
                if snap.nlink > 1:
                    return _in_place(wfd, dir_fd, base, snap, data)
                done = _via_temp(wfd, dir_fd, base, snap, data)
                if done is not None:
                    return done
                return _in_place(wfd, dir_fd, base, snap, data)
            finally:
                os.close(wfd)
    finally:
        os.close(dir_fd)


def _via_temp(wfd: int, dir_fd: int, base: str, snap: Snapshot, data: bytes) -> str | None:
    """Write a temporary file and exchange it in; None: use the in-place fallback instead."""
    try:
        tmp, tfd = _create_temp(dir_fd)
    except OSError:
        return None  # the directory is not writable: the file itself may be
    placed = False
    try:
        faults.pause("fix:open", snap.path)
        signals.checkpoint()
        _write_all(tfd, data)
        faults.pause("fix:write", snap.path)
        signals.checkpoint()
        if not _copy_metadata(wfd, tfd, snap):
            return None
        os.fsync(tfd)
        faults.pause("fix:fsync", snap.path)
        signals.checkpoint()
        why = _still(dir_fd, base, snap)
        if why is not None:
            raise FileChanged(why)
        faults.pause("fix:replace", snap.path)  # after the check: the exchange below must catch a save here
        signals.checkpoint()
        try:
            exchanged = _exchange(dir_fd, tmp, base)
            if not exchanged:
                _rename(dir_fd, tmp, base)
        except OSError as e:
            if e.errno == errno.ENOENT:
                raise FileChanged("deleted") from None  # deleted after the check: not re-created
            if e.errno in (errno.EBUSY, errno.EXDEV, errno.EPERM, errno.EACCES):
                return None  # a bind-mounted single file, or a directory that refuses renames
            raise
        placed = True
        if exchanged:
            # ``tmp`` now holds what was at ``base`` a moment ago: the file read, or an editor's save
            why = _still(dir_fd, tmp, snap, ctime=False)  # a rename may touch ctime
            if why is not None:
                try:
                    back = _exchange(dir_fd, tmp, base)
                except OSError:
                    back = False
                if not back:
                    _rename(dir_fd, tmp, base)  # theirs over ours: the fix is lost, their save is not
                    raise FileChanged("changed")
                placed = False  # theirs is back at ``base``; ours is at ``tmp``, removed below
                raise FileChanged("changed")
            _unlink_quiet(dir_fd, tmp)
        try:
            os.fsync(dir_fd)
        except OSError:
            pass
        return "renamed"
    finally:
        os.close(tfd)
        if not placed:
            _unlink_quiet(dir_fd, tmp)


def _in_place(wfd: int, dir_fd: int, base: str, snap: Snapshot, data: bytes) -> str:
    """Overwrite the original inode (keeps every attribute and hard link; not atomic against a
    SIGKILL or a power loss, which is why it is only the fallback)."""
    faults.pause("fix:inplace", snap.path)
    signals.checkpoint()
    why = _still(dir_fd, base, snap)
    if why is not None:
        raise FileChanged(why)
    st = os.fstat(wfd)
    if not _same(st, snap):
        raise FileChanged("changed")
    _write_all(wfd, data, 0)
    os.ftruncate(wfd, len(data))
    os.fsync(wfd)
    return "in-place"


# --- stale temporary files --------------------------------------------------------------------


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, not ours to signal
    return True


def sweep(directories: Iterable[str], also=None) -> int:
    """Remove the temporary files that killed runs left in ``directories``: a regular file with
    amplint's temporary name (or one ``also(name)`` accepts) whose lock nobody holds and whose
    writer is gone. Returns how many."""
    import fcntl

    removed = 0
    for d in sorted(set(directories)):
        try:
            dfd = os.open(d, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
        except OSError:
            continue
        try:
            try:
                names = [e.name for e in os.scandir(dfd) if is_temp_name(e.name) or (also is not None and also(e.name))]
            except OSError:
                continue
            for name in names:
                try:
                    fd = os.open(name, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC, dir_fd=dfd)
                except OSError:
                    continue
                try:
                    st = os.fstat(fd)
                    if not stat.S_ISREG(st.st_mode):
                        continue
                    try:
                        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    except OSError:
                        continue  # a live run is writing it
                    if name.startswith(TEMP_PREFIX):
                        pid_text = name[len(TEMP_PREFIX):].split("-", 1)[0]
                        pid = int(pid_text) if pid_text.isdigit() else -1
                        if pid == os.getpid():
                            continue
                        if _pid_alive(pid) and time.time() - st.st_mtime < _STALE_AFTER_S:
                            continue  # just created, not locked yet
                    here = os.stat(name, dir_fd=dfd, follow_symlinks=False)
                    if (here.st_dev, here.st_ino) == (st.st_dev, st.st_ino):
                        os.unlink(name, dir_fd=dfd)
                        removed += 1
                except OSError:
                    continue
                finally:
                    os.close(fd)
        finally:
            os.close(dfd)
    return removed


# --- amplint's own files: the cache -----------------------------------------------------------


class UnsafeDirectory(OSError):
    pass


def open_owned_dir(path: str, create: bool = True) -> int:
    """A descriptor of the directory ``path`` (created if missing), refusing a symbolic link and a
    directory owned by another user (root may use any)."""
    if create:
        try:
            os.makedirs(path, exist_ok=True)
        except FileExistsError:
            pass
    try:
        fd = os.open(path, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC)
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.ENOTDIR) and os.path.islink(path):
            raise UnsafeDirectory(errno.ELOOP, "is a symbolic link", path) from None
        raise
    st = os.fstat(fd)
    euid = os.geteuid()
    if euid != 0 and st.st_uid != euid:
        os.close(fd)
        raise UnsafeDirectory(errno.EPERM, "is owned by another user", path)
    return fd


def create_new(dir_fd: int, name: str, data: bytes) -> bool:
    """Create ``name`` with ``data`` if nothing (not even a dangling link) has that name."""
    try:
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o644, dir_fd=dir_fd)
    except FileExistsError:
        return False
    ok = False
    try:
        _write_all(fd, data)
        ok = True
    finally:
        os.close(fd)
        if not ok:
            _unlink_quiet(dir_fd, name)
    return True


def replace_in_dir(dir_fd: int, name: str, data: bytes, point: str = "cache") -> None:
    """Atomically set ``name`` (in a directory amplint owns) to ``data``: a locked temporary file
    renamed over it; the temporary file is removed on every failure path."""
    with signals.critical():
        tmp, tfd = _create_temp(dir_fd)
        placed = False
        try:
            faults.pause(f"{point}:open", name)
            signals.checkpoint()
            _write_all(tfd, data)
            os.fchmod(tfd, 0o644)
            faults.pause(f"{point}:write", name)
            signals.checkpoint()
            faults.pause(f"{point}:replace", name)
            signals.checkpoint()
            _rename(dir_fd, tmp, name)
            placed = True
        finally:
            os.close(tfd)
            if not placed:
                _unlink_quiet(dir_fd, tmp)


def read_bounded(dir_fd: int, name: str, limit: int) -> bytes | None:
    """``name``'s bytes if it is a regular file (not a link, FIFO or device) of at most ``limit``
    bytes; else None."""
    try:
        fd = os.open(name, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC, dir_fd=dir_fd)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return None
        return _read_fd(fd, st.st_size, limit)
    except OSError:
        return None
    finally:
        os.close(fd)
