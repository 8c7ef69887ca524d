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
import time
from pathlib import Path
from typing import Iterable

from .config import Settings
from .diagnostics import Diagnostic
from .engine import FileResult, Linter
from .files import Candidate, discover, read_file
from .safeio import FileTooLarge, is_temp_name

CACHE_VERSION = 3
_MAX_CACHE_ENTRIES = 200_000
_MAX_CACHE_BYTES = 256 * 1024 * 1024  # a cache file larger than this is not read
_BATCHES_PER_WORKER = 24
# a stat match is trusted only for a file last changed this long before it was read: within
# one timestamp granule, a same-size edit could keep the same mtime and ctime (git's "racy clean")
_RACY_NS = 2_000_000_000
CACHE_TAG = (b"Signature: 8a477f597d28d172789f06886806bc55\n"
             b"# This file is a cache directory tag created by amplint.\n"
             b"# For information about cache directory tags, see: https://bford.info/cachedir/\n")
_GITIGNORE = b"# Automatically created by amplint.\n*\n"


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def content_key(data: bytes, file_key: str) -> str:
    """A BLAKE2b digest of the bytes, and the settings that apply to the file."""
    from .config import blake2b

    return f"{blake2b(data).hexdigest()}:{file_key}"


def _own_cache_names(name: str) -> bool:
    return name in ("CACHEDIR.TAG", ".gitignore") or (name.startswith("results-") and name.endswith(".json")) \
        or name.startswith(".results-") or is_temp_name(name)


class Cache:
    """One JSON file per settings fingerprint: resolved root-relative path -> {stat, key, result}.

    The cache directory is amplint's: created by it (with CACHEDIR.TAG and a ``*`` .gitignore,
    each made ``O_CREAT|O_EXCL|O_NOFOLLOW``), never a symbolic link, never a directory of other
    files, never another user's. The results file is read only when it is a regular file under
    256 MB, and replaced atomically; a damaged file is a miss.
    """

    def __init__(self, directory: Path, settings: Settings) -> None:
        self.dir = str(directory)
        self.settings = settings
        self.name = f"results-{settings.fingerprint()}.json"
        self.root = os.path.realpath(str(settings.root))
        self._prefix = self.root.rstrip(os.sep) + os.sep
        self.entries: dict[str, dict] = {}
        self.by_key: dict[str, dict] = {}
        self.used: set[str] = set()
        self.dirty = False
        self.warning: str | None = None
        self._load()

    def _load(self) -> None:
        import json

        from . import safeio

        try:
            fd = safeio.open_owned_dir(self.dir, create=False)
        except safeio.UnsafeDirectory as e:
            self.warning = f"{self.dir}: not used as a cache: it {e.strerror}"
            return
        except OSError:
            return
        try:
            raw = safeio.read_bounded(fd, self.name, _MAX_CACHE_BYTES)
        finally:
            os.close(fd)
        if raw is None:
            return
        try:
            data = json.loads(raw)
        except (ValueError, RecursionError, UnicodeDecodeError):
            return
        entries = data.get("entries") if isinstance(data, dict) and data.get("version") == CACHE_VERSION else None
        if isinstance(entries, dict):
            # a damaged or foreign file: keep only entries of the right shape
            self.entries = {k: e for k, e in entries.items()
                            if isinstance(e, dict) and isinstance(e.get("key"), str) and isinstance(e.get("st"), list)}
        self.by_key = {e["key"]: e for e in self.entries.values()}

    def slot(self, c: Candidate) -> str:
        """The key of a file: its resolved path relative to the project root."""
        real = c.resolved or os.path.realpath(c.name)
        if real.startswith(self._prefix):
            rel = real[len(self._prefix):]
        else:
            rel = "." if real == self.root else real
        return ("!" if c.explicit else "") + rel

    @staticmethod
    def _stat(st: os.stat_result) -> list[int]:
        return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]

    def lookup_stat(self, slot: str, st: os.stat_result, file_key: str, name: str) -> FileResult | None:
        """A hit when the file's size, mtime, ctime and inode are the recorded ones and the file
        had not changed just before it was read (no read needed)."""
        e = self.entries.get(slot)
        if e is None or e.get("st") != self._stat(st) or e.get("fk") != file_key:
            return None
        read = e.get("read")
        if not isinstance(read, int) or read - max(st.st_mtime_ns, st.st_ctime_ns) <= _RACY_NS:
            return None  # racily clean: the content decides
        self.used.add(slot)
        return self._result(e, name)

    def lookup_key(self, key: str, name: str) -> FileResult | None:
        """A hit by content and per-file settings (the file was touched, moved or copied)."""
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
                           warnings=[name + str(w) for w in warnings] if warnings else [])
            if diags:
                r.diagnostics = [Diagnostic.from_json({**d, "filename": name}) for d in diags]
            return r
        except Exception:  # noqa: BLE001 - any damage means: lint the file again
            return None

    def put(self, slot: str, st: os.stat_result, read_ns: int, file_key: str, key: str, result: FileResult) -> None:
        if result.errors:
            return  # never cache an internal error
        out = result.to_cache()
        if result.warnings:
            prefix = result.path
            if not all(w.startswith(prefix) for w in result.warnings):
                return  # a warning that does not name the file: not cached
            out["warnings"] = [w[len(prefix):] for w in result.warnings]
        entry = {"st": self._stat(st), "read": read_ns, "fk": file_key, "key": key, **out}
        self.entries[slot] = entry
        self.by_key[key] = entry
        self.used.add(slot)
        self.dirty = True

    def save(self) -> None:
        from . import safeio

        self.sweep()
        if not self.dirty:
            return
        import json

        entries = self.entries
        if len(entries) > _MAX_CACHE_ENTRIES:
            entries = {k: v for k, v in entries.items() if k in self.used}
        try:
            existed = os.path.lexists(self.dir)
            fd = safeio.open_owned_dir(self.dir, create=True)
        except safeio.UnsafeDirectory as e:
            self.warning = f"{self.dir}: not used as a cache: it {e.strerror}"
            return
        except OSError:
            return  # a read-only checkout: run without a cache
        try:
            if existed and not self._is_ours(fd):
                self.warning = (f"{self.dir}: not used as a cache: the directory holds other files "
                                "(amplint only writes into a directory it created)")
                return
            safeio.create_new(fd, "CACHEDIR.TAG", CACHE_TAG)
            safeio.create_new(fd, ".gitignore", _GITIGNORE)
            payload = json.dumps({"version": CACHE_VERSION, "entries": entries}, separators=(",", ":")).encode()
            safeio.replace_in_dir(fd, self.name, payload)
        except OSError:
            pass  # a full disk: the temporary file is already gone
        finally:
            os.close(fd)

    def sweep(self) -> None:
        self.sweep_dir(self.dir)

    @staticmethod
    def sweep_dir(directory: str) -> None:
        """Remove what killed or failed saves left in the cache directory (also under --no-cache)."""
        from . import safeio

        if os.path.isdir(directory) and not os.path.islink(directory):
            safeio.sweep([directory], also=lambda n: n.startswith(".results-"))

    @staticmethod
    def _is_ours(fd: int) -> bool:
        try:
            return all(_own_cache_names(e.name) for e in os.scandir(fd))
        except OSError:
            return False


# --- one file, in a worker or in-process ---------------------------------------------------

_WORKER: tuple[Linter, bool] | None = None


def _init_worker(settings: Settings, hashing: bool) -> None:
    global _WORKER
    from . import signals

    signals.worker_defaults()
    _WORKER = (Linter(settings), hashing)


def _check_one(linter: Linter, hashing: bool, name: str, explicit: bool, file_key: str, cache: Cache | None):
    """Lint one file; returns (result, content key or None, fstat at read time, time of the read)."""
    from .engine import oversize_result

    path = Path(name)
    limit = linter.settings.max_file_size
    if path.suffix == ".ipynb":
        return linter.check_path(path, explicit), None, None, 0
    read_ns = time.time_ns()
    try:
        data, st = read_file(path, limit)
    except IsADirectoryError:
        return FileResult(name, errors=[f"{name}: is a directory"]), None, None, 0
    except FileTooLarge as e:
        return oversize_result(name, e.size, limit), None, None, 0
    except OSError:
        return linter.check_path(path, explicit), None, None, 0
    key = content_key(data, file_key) if hashing else None
    if key is not None and cache is not None:
        hit = cache.lookup_key(key, name)
        if hit is not None:
            return hit, key, st, read_ns
    return linter.check_bytes(data, name, explicit=explicit), key, st, read_ns


def _work(batch: list[tuple[int, str, bool, str]]) -> list[tuple]:
    assert _WORKER is not None
    linter, hashing = _WORKER
    from . import faults

    faults.pause("run:worker", os.getpid())
    out = []
    for index, name, explicit, file_key in batch:
        try:
            result, key, st, read_ns = _check_one(linter, hashing, name, explicit, file_key, None)
        except Exception as e:  # noqa: BLE001 - report and go on
            result, key, st, read_ns = FileResult(name, errors=[f"{name}: internal error: {type(e).__name__}: {e}"]), None, None, 0
        result.source = None  # the parent re-reads the file if it needs the text
        out.append((index, result, key, st, read_ns))
    return out


def _batches(todo: list[tuple], n: int) -> list[list[tuple]]:
    """Deal ``todo`` (largest first) round-robin into ``n`` batches of similar weight."""
    batches: list[list[tuple]] = [[] for _ in range(max(1, min(n, len(todo))))]
    for k, (_size, i, name, explicit, file_key) in enumerate(todo):
        batches[k % len(batches)].append((i, name, explicit, file_key))
    return batches


def discovery_results(found) -> list[FileResult]:
    """What the walk could not read (an AMP000 each: the exit is non-zero) and what it did not
    follow (a warning each)."""
    from .engine import _syntax_diag

    out = [FileResult(path, diagnostics=[_syntax_diag(path, reason, 1, 1)]) for path, reason in found.unreadable]
    out += [FileResult(w.split(": ", 1)[0], warnings=[w]) for w in found.warnings]
    return out


def run(paths: Iterable[str], settings: Settings, *, jobs: int | None = None, use_cache: bool = True,
        on_result=None) -> list[FileResult]:
    """Lint ``paths``; results are sorted by path, whatever ``jobs``, the order of ``paths`` or
    the cache are."""
    from . import safeio
    from .engine import oversize_result

    linter = Linter(settings)
    found = discover(list(paths), settings)
    safeio.sweep(found.temp_dirs)
    candidates: list[Candidate] = found.candidates
    cache = Cache(settings.cache_dir, settings) if use_cache and settings.cache_dir is not None else None
    results: list[FileResult | None] = [None] * len(candidates)
    slots: dict[int, tuple[str, str]] = {}
    todo: list[tuple[int, int, str, bool, str]] = []  # (size, index, path, explicit, file key)
    limit = settings.max_file_size
    for i, c in enumerate(candidates):
        name = c.name
        try:
            st = os.stat(name)
        except OSError:
            st = None
        if st is not None and st.st_size > limit and _is_regular(st):
            results[i] = oversize_result(name, st.st_size, limit)  # from the size alone: never read
            continue
        file_key = settings.file_key(name, c.explicit)
        if cache is not None:
            slot = cache.slot(c)
            slots[i] = (slot, file_key)
            if st is not None:
                hit = cache.lookup_stat(slot, st, file_key, name)
                if hit is not None:
                    results[i] = hit
                    continue
        todo.append((st.st_size if st is not None else 0, i, name, c.explicit, file_key))
    todo.sort(key=lambda t: (-t[0], t[2]))
    hashing = cache is not None
    # more workers than cores only adds start-up cost: cap ``--jobs`` at four per core
    n_jobs = default_jobs() if not jobs else min(jobs, 4 * default_jobs())
    read: dict[int, tuple] = {}
    heavy = sum(1 for t in todo if t[0] > 0)
    if n_jobs <= 1 or heavy <= 1 or sum(t[0] for t in todo) < 2_000_000 and len(todo) < 64:
        for _size, i, name, explicit, file_key in todo:
            try:
                results[i], *rest = _check_one(linter, hashing, name, explicit, file_key, cache)
                read[i] = tuple(rest)
            except Exception as e:  # noqa: BLE001
                results[i] = FileResult(name, errors=[f"{name}: internal error: {type(e).__name__}: {e}"])
    else:
        import multiprocessing

        import libcst  # noqa: F401 - imported once here, inherited by forked workers

        from . import model  # noqa: F401

        method = "fork" if "fork" in multiprocessing.get_all_start_methods() and sys.platform != "darwin" else "spawn"
        ctx = multiprocessing.get_context(method)
        batches = _batches(todo, n_jobs * _BATCHES_PER_WORKER)
        n_jobs = min(n_jobs, len(batches))
        with ctx.Pool(n_jobs, initializer=_init_worker, initargs=(settings, hashing)) as pool:
            for chunk in pool.imap_unordered(_work, batches, chunksize=1):
                for i, r, key, st, read_ns in chunk:
                    results[i] = r
                    read[i] = (key, st, read_ns)
    if cache is not None:
        for _s, i, _name, _explicit, _fk in todo:
            r = results[i]
            key, st, read_ns = read.get(i, (None, None, 0))
            if r is not None and key is not None and st is not None:
                slot, file_key = slots[i]
                cache.put(slot, st, read_ns, file_key, key, r)
        cache.save()
    out = [r for r in results if r is not None] + discovery_results(found)
    if cache is not None and cache.warning:
        out.append(FileResult(str(settings.cache_dir), warnings=[cache.warning]))
    elif cache is None and settings.cache_dir is not None:
        Cache.sweep_dir(str(settings.cache_dir))
    out.sort(key=lambda r: r.path)
    return out


def _is_regular(st: os.stat_result) -> bool:
    import stat

    return stat.S_ISREG(st.st_mode)
