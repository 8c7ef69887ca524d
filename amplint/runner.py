"""Run the linter over many files: discovery, cache, a process pool, deterministic results.

The parent only walks the tree and stats the files. A file whose cache entry matches its
size and modification time (and whose content hash was recorded under the current settings
and amplint build) is answered from the cache without being read. Every other file goes to
the workers, which read it, hash it, prefilter it and, if it passes, lint it; the files are
dealt to the workers largest first in interleaved batches, so that no worker ends up with all
the big ones. Results come back in any order and are sorted by path.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Iterable

from ._record import Factory, Record
from .config import Settings
from .diagnostics import Diagnostic
from .engine import FileResult, Linter
from .files import Candidate, discover, read_regular

CACHE_VERSION = 2
_MAX_CACHE_ENTRIES = 200_000
_BATCHES_PER_WORKER = 24


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def content_key(path: str, data: bytes, explicit: bool) -> str:
    """Content, size and path: CRC-32 and Adler-32 of the bytes (zlib: no OpenSSL import)."""
    import zlib

    tail = path.encode("utf-8", "surrogateescape") + (b"\1" if explicit else b"\0")
    return f"{zlib.crc32(data):08x}{zlib.adler32(data):08x}{len(data):x}:{zlib.crc32(tail):08x}"


class Cache:
    """One JSON file per settings fingerprint: path -> {size, mtime, key, result}."""

    def __init__(self, directory: Path, settings: Settings) -> None:
        self.dir = directory
        self.file = directory / f"results-{settings.fingerprint()}.json"
        self.entries: dict[str, dict] = {}
        self.by_key: dict[str, dict] = {}
        self.used: set[str] = set()
        self.dirty = False
        import json

        try:
            with open(self.file, encoding="utf-8") as f:
                data = json.load(f)
            entries = data.get("entries") if isinstance(data, dict) and data.get("version") == CACHE_VERSION else None
            if isinstance(entries, dict):
                # a damaged or foreign file: keep only entries of the right shape
                self.entries = {k: e for k, e in entries.items()
                                if isinstance(e, dict) and isinstance(e.get("key"), str)}
        except (OSError, ValueError, RecursionError):
            self.entries = {}
        self.by_key = {e["key"]: e for e in self.entries.values()}

    @staticmethod
    def _slot(name: str, explicit: bool) -> str:
        return ("!" if explicit else "") + name

    def lookup_stat(self, name: str, explicit: bool, size: int, mtime: int) -> FileResult | None:
        """A hit when the file's size and mtime are the recorded ones (no read needed)."""
        e = self.entries.get(self._slot(name, explicit))
        if e is None or e.get("size") != size or e.get("mtime") != mtime:
            return None
        self.used.add(self._slot(name, explicit))
        return self._result(e, name)

    def lookup_key(self, name: str, explicit: bool, key: str) -> FileResult | None:
        """A hit by content (the file was touched, or moved): its findings are recomputed."""
        e = self.by_key.get(key)
        if e is None:
            return None
        return self._result(e, name)

    @staticmethod
    def _result(e: dict, name: str) -> FileResult | None:
        """The cached result, or None (a miss) when the entry is damaged."""
        try:
            diags = e.get("diagnostics")
            warnings = e.get("warnings")
            r = FileResult(name, analysed=bool(e.get("analysed", False)),
                           warnings=[str(w) for w in warnings] if warnings else [])
            if diags:
                r.diagnostics = [Diagnostic.from_json({**d, "filename": name}) for d in diags]
            return r
        except Exception:  # noqa: BLE001 - any damage means: lint the file again
            return None

    def put(self, name: str, explicit: bool, size: int, mtime: int, key: str, result: FileResult) -> None:
        if result.errors:
            return  # never cache an internal error
        entry = {"size": size, "mtime": mtime, "key": key, **result.to_cache()}
        slot = self._slot(name, explicit)
        self.entries[slot] = entry
        self.by_key[key] = entry
        self.used.add(slot)
        self.dirty = True

    def save(self) -> None:
        if not self.dirty:
            return
        import json
        import tempfile

        entries = self.entries
        if len(entries) > _MAX_CACHE_ENTRIES:
            entries = {k: v for k, v in entries.items() if k in self.used}
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            gitignore = self.dir / ".gitignore"
            if not gitignore.exists():
                gitignore.write_text("# Automatically created by amplint.\n*\n", encoding="utf-8")
            fd, tmp = tempfile.mkstemp(prefix=".results-", dir=self.dir)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump({"version": CACHE_VERSION, "entries": entries}, f, separators=(",", ":"))
            os.replace(tmp, self.file)
        except OSError:
            pass  # a read-only checkout: run without a cache


# --- one file, in a worker or in-process ---------------------------------------------------


class FixMode(Record):
    """What ``--fix`` / ``--diff`` / ``--add-noqa`` asked for."""

    __slots__ = _fields = ("unsafe", "diff", "add_noqa")
    _defaults = {"unsafe": False, "diff": False, "add_noqa": False}
    unsafe: bool
    diff: bool
    add_noqa: bool

    def has_work(self, result: FileResult) -> bool:
        """A cached result that this mode would change (an applicable fix, a finding to noqa)."""
        if self.add_noqa:
            return any(d.code != "AMP000" and d.noqa_row is not None for d in result.diagnostics)
        return any(d.fix is not None and (d.fix.applicability == "safe" or self.unsafe) for d in result.diagnostics)


_WORKER: tuple[list[Settings], dict[int, Linter], bool, FixMode | None] | None = None


def _init_worker(settings: list[Settings], hashing: bool, mode: FixMode | None = None) -> None:
    global _WORKER
    _WORKER = (settings, {}, hashing, mode)


def _check_one(linter: Linter, hashing: bool, name: str, explicit: bool, cache: Cache | None):
    """Lint one file; returns (result, content key or None)."""
    path = Path(name)
    if path.suffix == ".ipynb":
        return linter.check_path(path, explicit), None
    try:
        data = read_regular(path)
    except IsADirectoryError:
        return FileResult(name, errors=[f"{name}: is a directory"]), None
    except OSError:
        return linter.check_path(path, explicit), None
    key = content_key(name, data, explicit) if hashing else None
    if key is not None and cache is not None:
        hit = cache.lookup_key(name, explicit, key)
        if hit is not None:
            return hit, key
    return linter.check_bytes(data, name, explicit=explicit), key


def _fix_one(linter: Linter, hashing: bool, name: str, explicit: bool, mode: FixMode):
    """Fix (or diff, or noqa) one file; returns (result, content key of the file as it is now)."""
    from .fixer import _fix_one as fix_file, encode_source

    c = Candidate(name, explicit)
    result = fix_file(linter, c, unsafe=mode.unsafe, diff=mode.diff, add_noqa=mode.add_noqa)
    key = None
    if hashing and not result.errors and c.path.suffix != ".ipynb":
        if result.fixed_text is not None and not mode.diff and result.source is not None:
            data = encode_source(result.fixed_text, result.source)
        elif result.fixed_text is None or mode.diff:
            try:
                data = read_regular(c.path)
            except OSError:
                data = None
        else:
            data = None
        if data is not None:
            key = content_key(name, data, explicit)
    return result, key


def _one(linter: Linter, hashing: bool, name: str, explicit: bool, cache: Cache | None, mode: FixMode | None):
    if mode is None:
        return _check_one(linter, hashing, name, explicit, cache)
    return _fix_one(linter, hashing, name, explicit, mode)


def _internal_error(name: str, e: Exception, mode: FixMode | None) -> FileResult:
    what = "internal error while fixing" if mode is not None else "internal error"
    return FileResult(name, errors=[f"{name}: {what}: {type(e).__name__}: {e}"])


def _work(batch: list[tuple[int, str, bool, int]]) -> list[tuple[int, FileResult, str | None]]:
    assert _WORKER is not None
    settings, linters, hashing, mode = _WORKER
    out = []
    for index, name, explicit, sidx in batch:
        linter = linters.get(sidx)
        if linter is None:
            linter = linters[sidx] = Linter(settings[sidx])
        try:
            result, key = _one(linter, hashing, name, explicit, None, mode)
        except Exception as e:  # noqa: BLE001 - report and go on
            result, key = _internal_error(name, e, mode), None
        if mode is None or not mode.diff or result.fixed_text is None:
            # the parent re-reads the file if it needs the text; only a diff needs both texts
            result.source = None
            result.fixed_text = None
        out.append((index, result, key))
    return out


def _batches(todo: list[tuple[int, int, str, bool, int]], n: int) -> list[list[tuple[int, str, bool, int]]]:
    """Deal ``todo`` (largest first) round-robin into ``n`` batches of similar weight."""
    batches: list[list[tuple[int, str, bool, int]]] = [[] for _ in range(max(1, min(n, len(todo))))]
    for k, (_size, i, name, explicit, sidx) in enumerate(todo):
        batches[k % len(batches)].append((i, name, explicit, sidx))
    return batches


class RunStats(Record):
    """What ``--verbose`` reports about a run."""

    __slots__ = _fields = ("files", "cache_hits", "linted", "workers", "settings")
    _defaults = {"files": 0, "cache_hits": 0, "linted": 0, "workers": 1, "settings": Factory(list)}
    files: int
    cache_hits: int
    linted: int
    workers: int
    settings: list


LAST_RUN = RunStats()


def run(paths: Iterable[str], settings, *, jobs: int | None = None, use_cache: bool = True,
        on_result=None, mode: FixMode | None = None) -> list[FileResult]:
    """Lint (or, with ``mode``, fix) ``paths``; results are sorted by path, whatever ``jobs`` is.

    ``settings`` is a :class:`~amplint.config.Workspace` (each file gets its nearest
    configuration) or one :class:`Settings` for every file."""
    global LAST_RUN
    from .files import as_workspace

    ws = as_workspace(settings)
    candidates: list[Candidate] = list(discover(list(paths), ws))
    # one linter and one cache per distinct configuration
    index_of: dict[int, int] = {}
    all_settings: list[Settings] = []
    for c in candidates:
        s = c.settings if c.settings is not None else ws.for_path(c.name)
        if id(s) not in index_of:
            index_of[id(s)] = len(all_settings)
            all_settings.append(s)
    linters: dict[int, Linter] = {}
    caches: dict[int, Cache | None] = {}
    for k, s in enumerate(all_settings):
        caches[k] = Cache(s.cache_dir, s) if use_cache and s.cache_dir is not None else None
    results: list[FileResult | None] = [None] * len(candidates)
    stats: dict[int, tuple[int, int]] = {}
    todo: list[tuple[int, int, str, bool, int]] = []  # (size, index, path, explicit, settings index)
    hits = 0
    for i, c in enumerate(candidates):
        name = c.name
        sidx = index_of[id(c.settings if c.settings is not None else ws.for_path(c.name))]
        try:
            st = os.stat(name)
            size, mtime = st.st_size, st.st_mtime_ns
        except OSError:
            size, mtime = 0, 0
        stats[i] = (size, mtime)
        cache = caches[sidx]
        if cache is not None:
            hit = cache.lookup_stat(name, c.explicit, size, mtime)
            if hit is not None and (mode is None or not mode.has_work(hit)):
                results[i] = hit
                hits += 1
                continue
        todo.append((size, i, name, c.explicit, sidx))
    todo.sort(key=lambda t: (-t[0], t[2]))
    hashing = any(c is not None for c in caches.values())
    # more workers than cores only adds start-up cost: cap ``--jobs`` at four per core
    n_jobs = default_jobs() if not jobs else min(jobs, 4 * default_jobs())
    keys: dict[int, str | None] = {}
    heavy = sum(1 for t in todo if t[0] > 0)
    workers = 1
    if n_jobs <= 1 or heavy <= 1 or sum(t[0] for t in todo) < 2_000_000 and len(todo) < 64:
        for _size, i, name, explicit, sidx in todo:
            linter = linters.get(sidx)
            if linter is None:
                linter = linters[sidx] = Linter(all_settings[sidx])
            try:
                results[i], keys[i] = _one(linter, caches[sidx] is not None, name, explicit, caches[sidx], mode)
            except Exception as e:  # noqa: BLE001
                results[i] = _internal_error(name, e, mode)
    else:
        import multiprocessing

        import libcst  # noqa: F401 - imported once here, inherited by forked workers

        from . import model  # noqa: F401

        if mode is not None:
            from . import fixer  # noqa: F401

        method = "fork" if "fork" in multiprocessing.get_all_start_methods() and sys.platform != "darwin" else "spawn"
        ctx = multiprocessing.get_context(method)
        batches = _batches(todo, n_jobs * _BATCHES_PER_WORKER)
        n_jobs = min(n_jobs, len(batches))
        workers = n_jobs
        with ctx.Pool(n_jobs, initializer=_init_worker, initargs=(all_settings, hashing, mode)) as pool:
            for chunk in pool.imap_unordered(_work, batches, chunksize=1):
                for i, r, key in chunk:
                    results[i], keys[i] = r, key
    for _s, i, name, explicit, sidx in todo:
        cache = caches[sidx]
        r, key = results[i], keys.get(i)
        if cache is not None and r is not None and key is not None:
            size, mtime = stats[i]
            if mode is not None and r.fixes_applied and not mode.diff:
                try:  # the file was rewritten: its entry is the new file's
                    st = os.stat(name)
                    size, mtime = st.st_size, st.st_mtime_ns
                except OSError:
                    continue
            cache.put(name, explicit, size, mtime, key, r)
    for cache in caches.values():
        if cache is not None:
            cache.save()
    LAST_RUN = RunStats(files=len(candidates), cache_hits=hits, linted=len(todo), workers=workers,
                        settings=all_settings)
    out = [r for r in results if r is not None]
    out.sort(key=lambda r: r.path)
    return out
