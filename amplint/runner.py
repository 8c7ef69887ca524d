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

from ._record import Factory, Record
from .config import Settings
from .diagnostics import Diagnostic
from .engine import FileResult, Linter
from .files import Candidate, discover, read_file
from .safeio import FileTooLarge, is_temp_name

CACHE_VERSION = 4
_MAX_CACHE_ENTRIES = 200_000
_MAX_CACHE_BYTES = 256 * 1024 * 1024  # a cache file larger than this is not read
_BATCHES_PER_WORKER = 4
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
        if e is None or e.get("st") != self._stat(st) or e.get("fk") != file_key or not _deps_unchanged(e.get("deps")):
            return None
        read = e.get("read")
        if not isinstance(read, int) or read - max(st.st_mtime_ns, st.st_ctime_ns) <= _RACY_NS:
            return None  # racily clean: the content decides
        self.used.add(slot)
        return self._result(e, name)

    def confirm_racy(self, slot: str, st: os.stat_result, file_key: str, name: str, limit: int):
        """An entry whose identity matches but that was recorded too soon after the file changed
        (:meth:`lookup_stat` does not trust it): the file is read and hashed, not linted; a hit
        when its content is the recorded one. Returns (result, key, identity, time of the read)
        or None."""
        e = self.entries.get(slot)
        if e is None or e.get("st") != self._stat(st) or e.get("fk") != file_key or not _deps_unchanged(e.get("deps")):
            return None
        read_ns = time.time_ns()
        try:
            data, fst = read_file(name, limit)
        except OSError:
            return None
        key = content_key(data, file_key)
        if key != e.get("key"):
            return None
        result = self._result(e, name)
        if result is None:
            return None
        self.used.add(slot)
        return result, key, self._stat(fst), read_ns

    def lookup_key(self, key: str, name: str) -> FileResult | None:
        """A hit by content and per-file settings (the file was touched, moved or copied)."""
        e = self.by_key.get(key)
        if e is None or not _deps_unchanged(e.get("deps")):
            return None
        return self._result(e, name)

    @staticmethod
    def _result(e: dict, name: str) -> FileResult | None:
        """The cached result, or None (a miss) when the entry is damaged."""
        try:
            diags = e.get("diagnostics")
            warnings = e.get("warnings")
            r = FileResult(name, analysed=bool(e.get("analysed", False)),
                           warnings=[name + str(w) for w in warnings] if warnings else [], deps=e.get("deps"))
            if diags:
                r.diagnostics = [Diagnostic.from_json({**d, "filename": name}) for d in diags]
            return r
        except Exception:  # noqa: BLE001 - any damage means: lint the file again
            return None

    def put(self, slot: str, ident: list[int], read_ns: int, file_key: str, key: str, result: FileResult) -> None:
        """Record ``result`` for the file at ``slot`` whose identity (:meth:`_stat`) and content
        ``key`` were taken when it was read at ``read_ns`` (or written: ``--fix``)."""
        if result.errors:
            return  # never cache an internal error
        out = result.to_cache()
        if result.warnings:
            prefix = result.path
            if not all(w.startswith(prefix) for w in result.warnings):
                return  # a warning that does not name the file: not cached
            out["warnings"] = [w[len(prefix):] for w in result.warnings]
        entry = {"st": list(ident), "read": read_ns, "fk": file_key, "key": key, **out}
        deps = result.deps if result.deps is not None else dependency_identities(result.path)
        if deps:
            entry["deps"] = deps
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


def dependency_identities(name: str) -> list:
    """``[path, size, mtime_ns]`` of the project modules that could make a file not analysed
    (no scaler code of its own) reached by a training module (its importers and the modules it
    imports, :meth:`amplint.project.Project.dependencies`): a cached result is not answered
    once one of them changed."""
    if not name.endswith(".py"):
        return []
    from .project import Project

    out = []
    try:
        path = Path(name).resolve()
        for dep in Project.for_path(path).dependencies(path):
            try:
                st = dep.stat()
            except OSError:
                continue
            out.append([str(dep), st.st_size, st.st_mtime_ns])
    except (OSError, ValueError):
        return []
    return out


def _deps_unchanged(deps) -> bool:
    if not deps:
        return True
    for item in deps:
        try:
            path, size, mtime = item
            st = os.stat(path)
        except (OSError, TypeError, ValueError):
            return False
        if st.st_size != size or st.st_mtime_ns != mtime:
            return False
    return True


def _init_worker(settings: list[Settings], hashing: bool, mode: FixMode | None = None) -> None:
    global _WORKER
    from . import signals

    signals.worker_defaults(fixing=mode is not None and not mode.diff)
    _WORKER = (settings, {}, hashing, mode)


def _ident(st) -> list[int]:
    return Cache._stat(st)


def _check_one(linter: Linter, hashing: bool, name: str, explicit: bool, file_key: str, cache: Cache | None):
    """Lint one file; returns (result, content key or None, identity at read time, time of the read)."""
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
            return hit, key, _ident(st), read_ns
    result = linter.check_bytes(data, name, explicit=explicit)
    if hashing:
        # analysed: the files its analysis read, as the versions it read; not analysed: the
        # files that could make it reached by a training module
        deps = linter.last_dependencies
        result.deps = deps if deps is not None else dependency_identities(name)
    return result, key, _ident(st), read_ns


def _fix_one(linter: Linter, hashing: bool, item: tuple, mode: FixMode):
    """Fix (or diff, or noqa) one file with the ``--fix`` write protocol; returns (result,
    content key, identity, time of the read) of the file as it is now (as written, or as read when
    nothing was written), or Nones when that is not known (the file changed meanwhile)."""
    from .fixer import _fix_one as fix_file

    name, explicit, file_key, resolved, contained = item
    c = Candidate(name, explicit, None, resolved, contained)
    record: list = []
    result = fix_file(linter, c, unsafe=mode.unsafe, diff=mode.diff, add_noqa=mode.add_noqa, record=record)
    if not hashing or not record or result.errors:
        return result, None, None, 0
    data, ident, read_ns = record[0]
    return result, content_key(data, file_key), ident, read_ns


def _one(linter: Linter, hashing: bool, item: tuple, cache: Cache | None, mode: FixMode | None):
    if mode is None:
        name, explicit, file_key = item[0], item[1], item[2]
        return _check_one(linter, hashing, name, explicit, file_key, cache)
    return _fix_one(linter, hashing, item, mode)


def _internal_error(name: str, e: Exception, mode: FixMode | None) -> FileResult:
    what = "internal error while fixing" if mode is not None else "internal error"
    return FileResult(name, errors=[f"{name}: {what}: {type(e).__name__}: {e}"])


def _work(batch: list[tuple[int, int, tuple]]) -> list[tuple]:
    assert _WORKER is not None
    settings, linters, hashing, mode = _WORKER
    from . import faults, signals

    faults.pause("run:worker", os.getpid())
    out = []
    try:
        for index, sidx, item in batch:
            linter = linters.get(sidx)
            if linter is None:
                linter = linters[sidx] = Linter(settings[sidx])
            try:
                result, key, ident, read_ns = _one(linter, hashing, item, None, mode)
            except Exception as e:  # noqa: BLE001 - report and go on
                result, key, ident, read_ns = _internal_error(item[0], e, mode), None, None, 0
            if mode is None or not mode.diff or result.fixed_text is None:
                # the parent re-reads the file if it needs the text; only a diff needs both texts
                result.source = None
                result.fixed_text = None
            out.append((index, result, key, ident, read_ns))
    except signals.Interrupted as e:
        # the parent stops the pool (SIGTERM): the file being written was finished or left as
        # it was (see amplint.signals); end quietly, without a traceback
        os._exit(e.exit_code)
    return out


def _batches(todo: list[tuple], n: int) -> list[list[tuple]]:
    """Cut ``todo`` into ``n`` batches of similar weight (bytes), each a run of neighbouring
    paths: the modules of one package land in few batches, so few workers build that project's
    index and models (project-wide analysis reads a module's importers and imports). Heaviest
    batch first."""
    n = max(1, min(n, len(todo)))
    items = sorted(todo, key=lambda t: t[3][0])
    total = sum(max(t[0], 1) for t in items)
    batches: list[list[tuple]] = []
    current: list[tuple] = []
    weight = 0
    for k, (size, i, sidx, item) in enumerate(items):
        current.append((i, sidx, item))
        weight += max(size, 1)
        left = len(items) - k - 1
        if weight * n >= total * (len(batches) + 1) - 1 and len(batches) < n - 1 and left:
            batches.append(current)
            current = []
    if current:
        batches.append(current)
    sizes = {t[1]: max(t[0], 1) for t in todo}
    batches.sort(key=lambda b: -sum(sizes[i] for i, _s, _it in b))
    return batches


def discovery_results(found) -> list[FileResult]:
    """What the walk could not read (an AMP000 each: the exit is non-zero) and what it did not
    follow (a warning each)."""
    from .engine import _syntax_diag

    out = [FileResult(path, diagnostics=[_syntax_diag(path, reason, 1, 1)]) for path, reason in found.unreadable]
    out += [FileResult(w.split(": ", 1)[0], warnings=[w]) for w in found.warnings]
    return out


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
    """Lint (or, with ``mode``, fix) ``paths``; results are sorted by path, whatever ``jobs``, the
    order of ``paths`` or the cache are.

    ``settings`` is a :class:`~amplint.config.Workspace` (each file gets its nearest
    configuration) or one :class:`Settings` for every file. Each distinct configuration gets one
    linter and one cache (its results file: the fingerprint of those settings); a cache entry is
    keyed by the file's resolved path relative to its project root, and holds the settings that
    apply to that file, a BLAKE2b hash of its content and its identity (size, mtime, ctime,
    inode)."""
    global LAST_RUN
    from . import safeio
    from .engine import oversize_result
    from .files import as_workspace

    from .project import Project

    Project.forget()  # the project indexes of an earlier run in this process may be stale
    from .engine import tune_gc

    tune_gc()  # before the workers fork: they inherit it
    ws = as_workspace(settings)
    found = discover(list(paths), ws)
    safeio.sweep(found.temp_dirs)
    candidates: list[Candidate] = found.candidates
    # one linter and one cache per distinct configuration
    index_of: dict[int, int] = {}
    all_settings: list[Settings] = []
    for c in candidates:
        s = c.settings if c.settings is not None else ws.for_path(c.name)
        c.settings = s
        if id(s) not in index_of:
            index_of[id(s)] = len(all_settings)
            all_settings.append(s)
    caches: dict[int, Cache | None] = {}
    shared: dict[tuple[str, str], Cache] = {}  # two configurations with one fingerprint share a file
    for k, s in enumerate(all_settings):
        if use_cache and s.cache_dir is not None:
            ck = (os.path.abspath(str(s.cache_dir)), s.fingerprint())
            if ck not in shared:
                shared[ck] = Cache(s.cache_dir, s)
            caches[k] = shared[ck]
        else:
            caches[k] = None
    results: list[FileResult | None] = [None] * len(candidates)
    slots: dict[int, tuple[str, str]] = {}
    todo: list[tuple[int, int, int, tuple]] = []  # (size, index, settings index, work item)
    hits = 0
    for i, c in enumerate(candidates):
        name = c.name
        sidx = index_of[id(c.settings)]
        s = all_settings[sidx]
        try:
            st = os.stat(name)
        except OSError:
            st = None
        limit = s.max_file_size
        if st is not None and st.st_size > limit and _is_regular(st):
            results[i] = oversize_result(name, st.st_size, limit)  # from the size alone: never read
            continue
        file_key = s.file_key(name, c.explicit)
        cache = caches[sidx]
        if cache is not None:
            slot = cache.slot(c)
            slots[i] = (slot, file_key)
            if st is not None:
                hit = cache.lookup_stat(slot, st, file_key, name)
                confirmed = None
                if hit is None and _is_regular(st):
                    confirmed = cache.confirm_racy(slot, st, file_key, name, limit)
                    if confirmed is not None:
                        hit = confirmed[0]
                if hit is not None and (mode is None or not mode.has_work(hit)):
                    results[i] = hit
                    hits += 1
                    if confirmed is not None and confirmed[3] - max(st.st_mtime_ns, st.st_ctime_ns) > _RACY_NS:
                        # confirmed long enough after its last change: from now on its identity suffices
                        cache.put(slot, confirmed[2], confirmed[3], file_key, confirmed[1], hit)
                    continue
        item = (name, c.explicit, file_key, c.resolved, c.contained)
        todo.append((st.st_size if st is not None else 0, i, sidx, item))
    todo.sort(key=lambda t: (-t[0], t[3][0]))
    hashing = any(c is not None for c in caches.values())
    # more workers than cores only adds start-up cost: cap ``--jobs`` at four per core
    n_jobs = default_jobs() if not jobs else min(jobs, 4 * default_jobs())
    read: dict[int, tuple] = {}
    extra: list[FileResult] = []
    heavy = sum(1 for t in todo if t[0] > 0)
    workers = 1
    if n_jobs <= 1 or heavy <= 1 or sum(t[0] for t in todo) < 2_000_000 and len(todo) < 64:
        _serial(todo, all_settings, caches, mode, results, read)
    else:
        workers, lost = _parallel(todo, n_jobs, all_settings, hashing, mode, results, read)
        if lost:
            # a worker ended abruptly (killed: out of memory, a signal from outside; or a crash):
            # the pool cannot go on, and a result that will never come is not waited for. What
            # no worker finished goes to a fresh pool once, then, if that breaks too, is linted here
            n = len(lost[0])
            again = _parallel(lost[0], n_jobs, all_settings, hashing, mode, results, read)[1]
            where = "a new pool of workers"
            if again:
                where += f", then in the main process (that pool's worker also ended: {again[1]})"
                _serial(again[0], all_settings, caches, mode, results, read)
            extra.append(FileResult("", warnings=[
                f"a worker process ended abruptly ({lost[1]}); the {n} file{'s' if n != 1 else ''} "
                f"not finished were linted in {where}"]))
    for _s, i, sidx, _item in todo:
        cache = caches[sidx]
        r = results[i]
        key, ident, read_ns = read.get(i, (None, None, 0))
        if cache is not None and r is not None and key is not None and ident is not None:
            slot, file_key = slots[i]
            cache.put(slot, ident, read_ns, file_key, key, r)
    for i, c in enumerate(candidates):
        r = results[i]
        if not c.contained and r is not None and any(d.fix is not None for d in r.diagnostics):
            # a file reached through a link out of the project is never written: no fix is offered
            # (a copy, so the cached result keeps its fixes for a run where the path is fixable)
            results[i] = r._replace(diagnostics=[d._replace(fix=None) if d.fix is not None else d
                                                 for d in r.diagnostics])
    out = [r for r in results if r is not None] + discovery_results(found) + extra
    saved: set[int] = set()
    for k, s in enumerate(all_settings):
        cache = caches[k]
        if cache is not None:
            if id(cache) in saved:
                continue
            saved.add(id(cache))
            cache.save()
            if cache.warning:
                out.append(FileResult(str(s.cache_dir), warnings=[cache.warning]))
        elif s.cache_dir is not None:
            Cache.sweep_dir(str(s.cache_dir))
    LAST_RUN = RunStats(files=len(candidates), cache_hits=hits, linted=len(todo), workers=workers,
                        settings=all_settings)
    out.sort(key=lambda r: r.path)
    return out


def _serial(todo: list[tuple], all_settings: list[Settings], caches, mode, results: list, read: dict) -> None:
    linters: dict[int, Linter] = {}
    # in path order: a project's modules one after the other, its models built once
    for _size, i, sidx, item in sorted(todo, key=lambda t: t[3][0]):
        linter = linters.get(sidx)
        if linter is None:
            linter = linters[sidx] = Linter(all_settings[sidx])
        try:
            results[i], *rest = _one(linter, caches[sidx] is not None, item, caches[sidx], mode)
            read[i] = tuple(rest)
        except Exception as e:  # noqa: BLE001
            results[i] = _internal_error(item[0], e, mode)


def _parallel(todo: list[tuple], n_jobs: int, all_settings: list[Settings], hashing: bool, mode,
              results: list, read: dict) -> tuple[int, tuple[list[tuple], str] | None]:
    """Lint ``todo`` in a pool of forked workers; returns the number of workers and, if a worker
    ended abruptly, the items no worker finished and how it ended (``concurrent.futures`` notices
    a dead worker, where ``multiprocessing.Pool`` waits for its result for ever)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    import libcst  # noqa: F401 - imported once here, inherited by forked workers

    from . import model  # noqa: F401

    if mode is not None:
        from . import fixer  # noqa: F401

    method = "fork" if "fork" in multiprocessing.get_all_start_methods() and sys.platform != "darwin" else "spawn"
    batches = _batches(todo, n_jobs * _BATCHES_PER_WORKER)
    n_jobs = min(n_jobs, len(batches))
    ex = ProcessPoolExecutor(n_jobs, mp_context=multiprocessing.get_context(method), initializer=_init_worker,
                             initargs=(all_settings, hashing, mode))
    done: set[int] = set()
    how = None
    try:
        # submitted heaviest batch first: the workers take them in this order
        futures = {ex.submit(_work, b): k for k, b in enumerate(batches)}
        # the workers, kept here: once the pool is broken its manager thread may empty its own
        # table before the exit codes are read (the reason a SIGKILL was sometimes "crashed")
        workers = list((getattr(ex, "_processes", None) or {}).values())
        for fut in as_completed(futures):
            try:
                chunk = fut.result()
            except BrokenProcessPool:
                how = how or _how_workers_ended(workers or list((getattr(ex, "_processes", None) or {}).values()))
                continue
            done.add(futures[fut])
            for i, r, key, ident, read_ns in chunk:
                results[i] = r
                read[i] = (key, ident, read_ns)
    except BaseException:
        # interrupted (SIGINT, SIGTERM): stop the workers as Pool.terminate did; a fixing worker
        # finishes or undoes the replacement it is in (amplint.signals), then ends quietly
        for p in list(getattr(ex, "_processes", {}).values()):
            if p.is_alive():
                p.terminate()
        ex.shutdown(wait=True, cancel_futures=True)
        raise
    ex.shutdown(wait=True)
    if how is None:
        return n_jobs, None
    by_index = {t[1]: t for t in todo}
    lost = [by_index[i] for k, b in enumerate(batches) if k not in done for i, _sidx, _item in b]
    return n_jobs, (lost, how)


def _how_workers_ended(workers: list) -> str:
    import signal

    for p in workers:
        if p.exitcode is None:
            p.join(0.5)  # (a worker the pool is terminating: its code once it is gone)
    if all(p.exitcode in (None, 0, -signal.SIGTERM) for p in workers):
        # only the ones the pool terminated are gone yet (a loaded machine reaps the one that died
        # first later): give the others longer, so the cause is named, not the pool's SIGTERM
        for p in workers:
            if p.exitcode is None:
                p.join(5)
    codes = [p.exitcode for p in workers if p.exitcode not in (None, 0)]
    # the pool terminates the others (SIGTERM) once one has died: name the one that died first
    codes.sort(key=lambda c: c == -signal.SIGTERM)
    if not codes:
        return "killed or crashed"
    if codes[0] > 0:
        return f"exit status {codes[0]}"
    try:
        return f"killed by {signal.Signals(-codes[0]).name}"
    except ValueError:
        return f"killed by signal {-codes[0]}"

def _is_regular(st: os.stat_result) -> bool:
    import stat

    return stat.S_ISREG(st.st_mode)
