"""File discovery: recursive ``*.py`` (and ``*.ipynb``) walk with excludes, symlink-loop safe."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator

from ._record import Record
from .config import Settings

SOURCE_SUFFIXES = (".py", ".pyi", ".ipynb")


def read_regular(path: str | os.PathLike) -> bytes:
    """The bytes of a regular file. A directory raises ``IsADirectoryError``; a FIFO, socket or
    device raises ``OSError`` without being read (a FIFO would block for ever and ``/dev/zero``
    never ends), so a stray special file never hangs the run."""
    import errno
    import stat

    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "Is a directory", str(path))
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        chunks = []
        while True:
            chunk = os.read(fd, max(st.st_size + 1, 1 << 16))
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


class Candidate(Record):
    __slots__ = _fields = ("name", "explicit", "settings")
    _defaults = {"settings": None}
    name: str  # the path as it will be displayed
    explicit: bool  # named on the command line (not found by walking a directory)
    settings: Settings | None  # the file's settings (its nearest configuration)

    @property
    def path(self) -> Path:
        return Path(self.name)


class PathError(Exception):
    """A path given on the command line that does not exist."""


class OneSettings:
    """A workspace of one :class:`Settings` for every file (``--config FILE``, the API)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def for_dir(self, directory, names=None) -> Settings:
        return self.settings

    def for_path(self, path) -> Settings:
        return self.settings

    def all_settings(self) -> list[Settings]:
        return [self.settings]


def as_workspace(settings):
    return OneSettings(settings) if isinstance(settings, Settings) else settings


def discover(paths: list[str], settings, ignores=None) -> Iterator[Candidate]:
    """The files to lint under ``paths``, with their settings; ``settings`` is a
    :class:`~amplint.config.Workspace` (nearest configuration per folder) or one Settings."""
    from .ignore import IgnoreFiles

    ws = as_workspace(settings)
    ignores = ignores if ignores is not None else IgnoreFiles()
    seen: set[str] = set()
    for raw in paths:
        p = Path(raw)
        if not p.exists() and not p.is_symlink():
            raise PathError(f"{raw}: No such file or directory")
        if p.is_dir():
            s = ws.for_dir(raw)
            if s.force_exclude and s.is_excluded(p):
                continue
            yield from _walk(p, ws, seen, ignores)
        else:
            s = ws.for_path(raw)
            if s.force_exclude and s.is_excluded(p):
                continue
            key = _key(p)
            if key not in seen:
                seen.add(key)
                yield Candidate(str(p), explicit=True, settings=s)


def _key(p: Path | str) -> str:
    # absolute, not resolved: resolving every file costs a syscall per path component, and the
    # walk already refuses to enter a directory twice (symlink loops)
    return os.path.abspath(str(p))


def _walk(root: Path, ws, seen: set[str], ignores) -> Iterator[Candidate]:
    from .ignore import ignored

    visited_dirs: set[tuple[int, int]] = set()
    top = str(root)
    stack: list[tuple[str, list | None]] = [(top, None)]
    while stack:
        d, inherited = stack.pop()
        try:
            st = os.stat(d)
        except OSError:
            continue
        ident = (st.st_dev, st.st_ino)
        if ident in visited_dirs:
            continue  # a symlink loop, or the same directory reached twice
        visited_dirs.add(ident)
        try:
            entries = sorted(os.scandir(d), key=lambda e: e.name)
        except OSError:
            continue
        names = {e.name for e in entries}
        abs_d = os.path.abspath(d)
        settings = ws.for_dir(abs_d, names)
        specs = None
        if settings.respect_gitignore:
            base = inherited if inherited is not None else ignores.above(abs_d)
            own = ignores.own(abs_d, names, ignores.repo_root(abs_d) is not None)
            specs = base + own if own else base
        subdirs = []
        excluder = settings.excluder
        for e in entries:
            try:
                is_dir = e.is_dir()
            except OSError:
                continue
            path = e.name if d == "." else e.path  # "pkg/train.py", not "./pkg/train.py"
            abs_path = os.path.join(abs_d, e.name)
            if excluder.entry(abs_path, e.name):
                continue
            if not is_dir and not e.name.endswith(SOURCE_SUFFIXES):
                continue
            if specs and ignored(specs, abs_path, is_dir):
                continue
            if is_dir:
                subdirs.append(path)
            else:
                key = _key(path)
                if key not in seen:
                    seen.add(key)
                    yield Candidate(path, explicit=False, settings=settings)
        stack.extend((sd, specs) for sd in reversed(subdirs))
