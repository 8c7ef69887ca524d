"""Run the linter over many files: discovery, cache, prefilter in the parent, a process pool
for the files that need parsing (largest first), results in a deterministic order."""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Iterable

from .config import Settings
from .diagnostics import Diagnostic
from .engine import FileResult, Linter
from .files import Candidate, discover

CACHE_VERSION = 1
_MAX_CACHE_ENTRIES = 200_000


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


class Cache:
    def __init__(self, directory: Path, settings: Settings) -> None:
        self.dir = directory
        self.file = directory / f"results-{settings.fingerprint()}.json"
        self.entries: dict[str, dict] = {}
        self.used: set[str] = set()
        self.dirty = False
        try:
            with open(self.file, encoding="utf-8") as f:
                data = json.load(f)
            if data.get("version") == CACHE_VERSION:
                self.entries = data.get("entries", {})
        except (OSError, ValueError):
            self.entries = {}

    @staticmethod
    def key(path: str, data: bytes, explicit: bool) -> str:
        h = hashlib.blake2b(data, digest_size=16)
        h.update(b"\0" + path.encode("utf-8", "surrogateescape") + (b"\1" if explicit else b"\0"))
        return h.hexdigest()

    def get(self, key: str, name: str) -> FileResult | None:
        e = self.entries.get(key)
        if e is None:
            return None
        self.used.add(key)
        r = FileResult(name, analysed=e.get("analysed", False), warnings=list(e.get("warnings", [])))
        r.diagnostics = [Diagnostic.from_json({**d, "filename": name}) for d in e.get("diagnostics", [])]
        return r

    def put(self, key: str, result: FileResult) -> None:
        if result.errors:
            return  # never cache an internal error
        self.entries[key] = result.to_cache()
        self.used.add(key)
        self.dirty = True

    def save(self) -> None:
        if not self.dirty:
            return
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


# --- the pool ---------------------------------------------------------------------------

_WORKER_LINTER: Linter | None = None


def _init_worker(settings: Settings) -> None:
    global _WORKER_LINTER
    _WORKER_LINTER = Linter(settings)


def _work(item: tuple[int, str, bool]) -> tuple[int, FileResult]:
    index, path, explicit = item
    assert _WORKER_LINTER is not None
    try:
        result = _WORKER_LINTER.check_path(Path(path), explicit)
        result.source = None  # the parent re-reads the file if it needs the text
        return index, result
    except Exception as e:  # noqa: BLE001 - report and go on
        return index, FileResult(path, errors=[f"{path}: internal error: {type(e).__name__}: {e}"])


def run(paths: Iterable[str], settings: Settings, *, jobs: int | None = None, use_cache: bool = True,
        on_result=None) -> list[FileResult]:
    """Lint ``paths``; results are sorted by path, whatever ``jobs`` is."""
    linter = Linter(settings)
    candidates: list[Candidate] = list(discover(list(paths), settings))
    cache = Cache(settings.cache_dir, settings) if use_cache and settings.cache_dir is not None else None
    results: list[FileResult | None] = [None] * len(candidates)
    todo: list[tuple[int, int, str, bool]] = []  # (size, index, path, explicit)
    keys: dict[int, str] = {}
    for i, c in enumerate(candidates):
        name = str(c.path)
        if c.path.suffix == ".ipynb":
            todo.append((0, i, name, c.explicit))
            continue
        try:
            data = c.path.read_bytes()
        except IsADirectoryError:
            results[i] = FileResult(name, errors=[f"{name}: is a directory"])
            continue
        except OSError:
            results[i] = linter.check_path(c.path, c.explicit)
            continue
        if cache is not None:
            key = Cache.key(name, data, c.explicit)
            keys[i] = key
            hit = cache.get(key, name)
            if hit is not None:
                results[i] = hit
                continue
        if not linter.prefilter(data):
            r = linter.check_bytes(data, name, explicit=c.explicit)  # cheap: no LibCST
            results[i] = r
            if cache is not None:
                cache.put(keys[i], r)
            continue
        todo.append((len(data), i, name, c.explicit))
    todo.sort(key=lambda t: (-t[0], t[2]))
    n_jobs = default_jobs() if not jobs else jobs
    n_jobs = max(1, min(n_jobs, len(todo)))
    if n_jobs == 1 or len(todo) <= 1:
        for _size, i, name, explicit in todo:
            results[i] = linter.check_path(Path(name), explicit)
    else:
        import multiprocessing

        import libcst  # noqa: F401 - imported once here, inherited by forked workers

        from . import model  # noqa: F401

        method = "fork" if "fork" in multiprocessing.get_all_start_methods() and sys.platform != "darwin" else "spawn"
        ctx = multiprocessing.get_context(method)
        with ctx.Pool(n_jobs, initializer=_init_worker, initargs=(settings,)) as pool:
            for i, r in pool.imap_unordered(_work, [(i, name, explicit) for _s, i, name, explicit in todo], chunksize=1):
                results[i] = r
    if cache is not None:
        for _s, i, _name, _e in todo:
            r = results[i]
            if r is not None and i in keys:
                cache.put(keys[i], r)
        cache.save()
    out = [r for r in results if r is not None]
    out.sort(key=lambda r: r.path)
    return out
