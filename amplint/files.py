"""File discovery: recursive ``*.py`` (and ``*.ipynb``) walk with excludes, symlink-loop safe."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from .config import Settings

SOURCE_SUFFIXES = (".py", ".pyi", ".ipynb")


@dataclass(frozen=True)
class Candidate:
    path: Path
    explicit: bool  # named on the command line (not found by walking a directory)


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
                yield Candidate(p, explicit=True)


def _key(p: Path) -> str:
    try:
        return str(p.resolve())
    except (OSError, RuntimeError):
        return os.path.abspath(str(p))


def _walk(root: Path, settings: Settings, seen: set[str]) -> Iterator[Candidate]:
    visited_dirs: set[tuple[int, int]] = set()
    stack = [root]
    while stack:
        d = stack.pop()
        try:
            st = d.stat()
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
        for e in entries:
            path = Path(e.path)
            try:
                is_dir = e.is_dir()
            except OSError:
                continue
            if settings.is_excluded(path):
                continue
            if is_dir:
                subdirs.append(path)
            elif e.name.endswith(SOURCE_SUFFIXES):
                key = _key(path)
                if key not in seen:
                    seen.add(key)
                    yield Candidate(path, explicit=False)
        stack.extend(reversed(subdirs))
