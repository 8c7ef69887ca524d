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
    __slots__ = _fields = ("name", "explicit")
    name: str  # the path as it will be displayed
    explicit: bool  # named on the command line (not found by walking a directory)

    @property
    def path(self) -> Path:
        return Path(self.name)


class PathError(Exception):
    """A path given on the command line that does not exist."""


def discover(paths: list[str], settings: Settings) -> Iterator[Candidate]:
    seen: set[str] = set()
    for raw in paths:
        p = Path(raw)
        if not p.exists() and not p.is_symlink():
            raise PathError(f"{raw}: No such file or directory")
        if p.is_dir():
            if settings.force_exclude and settings.is_excluded(p):
                continue
            yield from _walk(p, settings, seen)
        else:
            if settings.force_exclude and settings.is_excluded(p):
                continue
            key = _key(p)
            if key not in seen:
                seen.add(key)
                yield Candidate(str(p), explicit=True)


def _key(p: Path | str) -> str:
    # absolute, not resolved: resolving every file costs a syscall per path component, and the
    # walk already refuses to enter a directory twice (symlink loops)
    return os.path.abspath(str(p))


def _walk(root: Path, settings: Settings, seen: set[str]) -> Iterator[Candidate]:
    visited_dirs: set[tuple[int, int]] = set()
    stack = [str(root)]
    while stack:
        d = stack.pop()
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
        subdirs = []
        excluder = settings.excluder
        for e in entries:
            try:
                is_dir = e.is_dir()
            except OSError:
                continue
            path = e.name if d == "." else e.path  # "pkg/train.py", not "./pkg/train.py"
            if excluder.entry(path, e.name):
                continue
            if is_dir:
                subdirs.append(path)
            elif e.name.endswith(SOURCE_SUFFIXES):
                key = _key(path)
                if key not in seen:
                    seen.add(key)
                    yield Candidate(path, explicit=False)
        stack.extend(reversed(subdirs))
