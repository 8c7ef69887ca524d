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
    __slots__ = _fields = ("name", "explicit", "settings", "resolved", "contained")
    _defaults = {"settings": None, "resolved": "", "contained": True}
    name: str  # the path as it will be displayed
    explicit: bool  # named on the command line (not found by walking a directory)
    settings: Settings | None  # the file's settings (its nearest configuration)
    resolved: str  # the real path (symbolic links resolved)
    contained: bool  # the real path is inside the tree it was named or found in: may be fixed

    def __init__(self, name: str, explicit: bool, settings: Settings | None = None, resolved: str = "",
                 contained: bool = True) -> None:
        # one per file of the walk: a plain constructor (Record's generic one costs 5 us)
        self.name, self.explicit, self.settings = name, explicit, settings
        self.resolved, self.contained = resolved, contained

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


class Discovery:
    """What the walk found: the files (each with its settings), the paths it could not read
    (each is reported, and makes the exit non-zero), the links it did not follow out of the
    tree, and the directories that hold temporary files of earlier runs."""

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


def discover(paths: list[str], settings, ignores=None) -> Discovery:
    """The files to lint under ``paths``, with their settings; ``settings`` is a
    :class:`~amplint.config.Workspace` (nearest configuration per folder) or one Settings.

    The answer depends on the set of paths only, not on their order or repetition: a file named
    explicitly is explicit even if a directory also holds it, and a file reached twice keeps the
    name of the first argument in sorted order.

    Containment: a file or directory whose real path leaves both its project root and the tree
    it was found in (a symbolic link out of the tree) is not walked into, with a warning; a file
    named explicitly is linted, and marked not ``contained`` (``--fix`` leaves it alone)."""
    from .ignore import IgnoreFiles

    ws = as_workspace(settings)
    ignores = ignores if ignores is not None else IgnoreFiles()
    out = Discovery()
    explicit: dict[str, Candidate] = {}
    walked: dict[str, Candidate] = {}
    for raw in sorted(set(paths)):
        p = Path(raw)
        if not os.path.lexists(raw):
            raise PathError(f"{raw}: No such file or directory")
        if p.is_dir():
            s = ws.for_dir(raw)
            if s.force_exclude and s.is_excluded(p):
                continue
            real = os.path.realpath(raw)
            roots = (os.path.realpath(str(s.root)), real)
            # a folder named through a link out of the project (``pkglink -> ../outside``) is
            # linted, but nothing in it is fixed
            fixable = any(inside(real, r) for r in (roots[0], _named_anchor(raw)))
            _walk(str(p), roots, ws, ignores, walked, out, fixable)
            continue
        s = ws.for_path(raw)
        if s.force_exclude and s.is_excluded(p):
            continue
        key = _key(p)
        if key in explicit:
            continue
        real = os.path.realpath(raw)
        roots = (os.path.realpath(str(s.root)), _named_anchor(raw))
        explicit[key] = Candidate(str(p), True, s, real, any(inside(real, r) for r in roots))
        out.temp_dirs.add(os.path.dirname(os.path.abspath(raw)))
    out.candidates = sorted(list(explicit.values()) + [c for k, c in walked.items() if k not in explicit],
                            key=lambda c: c.name)
    return out


def _named_anchor(raw: str) -> str:
    """The real folder a path named on the command line hangs from: the folder holding its first
    component that is a symbolic link (``pkglink/d.py``: the folder holding ``pkglink``), else the
    folder holding the path itself. The components of an absolute path are the path's own."""
    given = Path(raw)
    parts = given.parts
    cur = Path(parts[0]) if given.is_absolute() else Path(".")
    for part in parts[1:] if given.is_absolute() else parts:
        nxt = cur / part
        if part not in (".", "..") and os.path.islink(nxt):
            return os.path.realpath(cur)
        cur = nxt
    return os.path.realpath(os.path.dirname(os.path.abspath(raw)))


def _key(p: Path | str) -> str:
    # absolute, not resolved: resolving every file costs a syscall per path component, and the
    # walk already refuses to enter a directory twice (symlink loops)
    return os.path.abspath(str(p))


def _walk(start: str, roots: tuple[str, ...], ws, ignores, found: dict[str, Candidate], out: Discovery,
          fixable: bool = True) -> None:
    from .ignore import ignored

    visited_dirs: set[tuple[int, int]] = set()
    stack: list[tuple[str, str, list | None]] = [(start, os.path.realpath(start), None)]
    while stack:
        d, real_d, inherited = stack.pop()
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
            abs_path = os.path.join(abs_d, e.name)
            if excluder.entry(abs_path, e.name):
                continue
            if not is_dir and not e.name.endswith(SOURCE_SUFFIXES):
                continue
            if specs and ignored(specs, abs_path, is_dir):
                continue
            real = os.path.realpath(path) if is_link else os.path.join(real_d, e.name)
            if is_dir:
                if is_link and not any(inside(real, r) for r in roots):
                    out.warnings.append(f"{path}: not linted: a symbolic link to a directory outside the project ({real})")
                    continue
                subdirs.append((path, real))
            else:
                if is_link and not any(inside(real, r) for r in roots):
                    out.warnings.append(f"{path}: not linted: a symbolic link to a file outside the project ({real}); "
                                        "name it on the command line to lint it")
                    continue
                key = _key(path)
                if key not in found:
                    found[key] = Candidate(path, False, settings, real, fixable)
        stack.extend((sd, real, specs) for sd, real in reversed(subdirs))
