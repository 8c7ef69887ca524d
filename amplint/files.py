"""File discovery: recursive ``*.py`` (and ``*.ipynb``) walk with excludes, symlink-loop safe."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator

from ._record import Record
from .config import Settings
from .safeio import is_temp_name

SOURCE_SUFFIXES = (".py", ".pyi", ".ipynb")


def read_file(path: str | os.PathLike, limit: int | None = None) -> tuple[bytes, os.stat_result]:
    """The bytes of a regular file and its ``fstat`` at the time it was read. A directory raises
    ``IsADirectoryError``; a FIFO, socket or device raises ``OSError`` without being read (a FIFO
    would block for ever and ``/dev/zero`` never ends), so a stray special file never hangs the
    run. A file over ``limit`` bytes raises :class:`amplint.safeio.FileTooLarge`, from its size
    before any byte is read (and again if it grows while being read)."""
    import errno
    import stat

    from .safeio import FileTooLarge, _read_fd

    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "Is a directory", str(path))
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        if limit is not None and st.st_size > limit:
            raise FileTooLarge(st.st_size, limit, str(path))
        return _read_fd(fd, st.st_size, limit), st
    finally:
        os.close(fd)


def read_regular(path: str | os.PathLike, limit: int | None = None) -> bytes:
    """The bytes of a regular file (see :func:`read_file`)."""
    return read_file(path, limit)[0]


class Candidate(Record):
    __slots__ = _fields = ("name", "explicit", "resolved", "contained")
    _defaults = {"resolved": "", "contained": True}
    name: str  # the path as it will be displayed
    explicit: bool  # named on the command line (not found by walking a directory)
    resolved: str  # the real path (symbolic links resolved)
    contained: bool  # the real path is inside the tree it was named or found in: may be fixed

    def __init__(self, name: str, explicit: bool, resolved: str = "", contained: bool = True) -> None:
        # one per file of the walk: a plain constructor (Record's generic one costs 5 us)
        self.name, self.explicit, self.resolved, self.contained = name, explicit, resolved, contained

    @property
    def path(self) -> Path:
        return Path(self.name)


class PathError(Exception):
    """A path given on the command line that does not exist."""


class Discovery:
    """What the walk found: the files, the paths it could not read (each is reported, and makes
    the exit non-zero), the links it did not follow out of the tree, and the directories that
    hold temporary files of earlier runs."""

    def __init__(self) -> None:
        self.candidates: list[Candidate] = []
        self.unreadable: list[tuple[str, str]] = []  # (path, reason)
        self.warnings: list[str] = []
        self.temp_dirs: set[str] = set()

    def __iter__(self) -> Iterator[Candidate]:
        return iter(self.candidates)


def inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _reason(e: OSError) -> str:
    return e.strerror or type(e).__name__


def discover(paths: list[str], settings: Settings) -> Discovery:
    """The files to lint. The answer depends on the set of paths only, not on their order or
    repetition: a file named explicitly is explicit even if a directory also holds it, and a file
    reached twice keeps the name of the first argument in sorted order.

    Containment: a file or directory whose real path leaves both the project root and the tree
    it was found in (a symbolic link out of the tree) is not walked into, with a warning; a file
    named explicitly is linted, and marked not ``contained`` (``--fix`` leaves it alone)."""
    out = Discovery()
    root_real = os.path.realpath(str(settings.root))
    explicit: dict[str, Candidate] = {}
    walked: dict[str, Candidate] = {}
    for raw in sorted(set(paths)):
        p = Path(raw)
        if not os.path.lexists(raw):
            raise PathError(f"{raw}: No such file or directory")
        if settings.force_exclude and settings.is_excluded(p):
            continue
        if p.is_dir():
            _walk(str(p), (root_real, os.path.realpath(raw)), settings, walked, out)
            continue
        key = _key(p)
        if key in explicit:
            continue
        real = os.path.realpath(raw)
        roots = (root_real, os.path.realpath(os.path.dirname(os.path.abspath(raw))))
        explicit[key] = Candidate(str(p), True, real, any(inside(real, r) for r in roots))
        out.temp_dirs.add(os.path.dirname(os.path.abspath(raw)))
    out.candidates = sorted(list(explicit.values()) + [c for k, c in walked.items() if k not in explicit],
                            key=lambda c: c.name)
    return out


def _key(p: Path | str) -> str:
    # absolute, not resolved: resolving every file costs a syscall per path component, and the
    # walk already refuses to enter a directory twice (symlink loops)
    return os.path.abspath(str(p))


def _walk(start: str, roots: tuple[str, ...], settings: Settings, found: dict[str, Candidate], out: Discovery) -> None:
    visited_dirs: set[tuple[int, int]] = set()
    stack = [(start, os.path.realpath(start))]
    excluder = settings.excluder
    while stack:
        d, real_d = stack.pop()
        try:
            st = os.stat(d)
        except OSError as e:
            out.unreadable.append((d, f"cannot read the directory: {_reason(e)}"))
            continue
        ident = (st.st_dev, st.st_ino)
        if ident in visited_dirs:
            continue  # a symlink loop, or the same directory reached twice
        visited_dirs.add(ident)
        try:
            entries = sorted(os.scandir(d), key=lambda e: e.name)
        except OSError as e:
            out.unreadable.append((d, f"cannot read the directory: {_reason(e)}"))
            continue
        subdirs = []
        for e in entries:
            path = e.name if d == "." else e.path  # "pkg/train.py", not "./pkg/train.py"
            if is_temp_name(e.name):
                out.temp_dirs.add(d)
                continue
            try:
                is_dir = e.is_dir()
                is_link = e.is_symlink()
            except OSError as err:
                out.unreadable.append((path, f"cannot read: {_reason(err)}"))
                continue
            if excluder.entry(path, e.name):
                continue
            if is_dir:
                real = os.path.realpath(path) if is_link else os.path.join(real_d, e.name)
                if is_link and not any(inside(real, r) for r in roots):
                    out.warnings.append(f"{path}: not linted: a symbolic link to a directory outside the project ({real})")
                    continue
                subdirs.append((path, real))
            elif e.name.endswith(SOURCE_SUFFIXES):
                real = os.path.realpath(path) if is_link else os.path.join(real_d, e.name)
                if is_link and not any(inside(real, r) for r in roots):
                    out.warnings.append(f"{path}: not linted: a symbolic link to a file outside the project ({real}); "
                                        "name it on the command line to lint it")
                    continue
                key = _key(path)
                if key not in found:
                    found[key] = Candidate(path, False, real, True)
        stack.extend(reversed(subdirs))
