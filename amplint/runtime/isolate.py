"""Run callables in forked children, a few at a time, each with a deadline.

The parent imports torch once and never touches CUDA or runs a kernel; every child is forked
from it, runs one job, pickles the result to a pipe and exits with ``os._exit``. A child that
dies (signal, interpreter abort) or outlives its deadline is recorded as such and the other
jobs go on. The child's file descriptors 1 and 2 go to a temporary file, whose tail is kept
for a crashed child.
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Job:
    key: Any
    fn: Callable[..., Any]
    args: tuple = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    timeout: float = 60.0


@dataclass
class Outcome:
    key: Any
    status: str  # "ok" (fn returned), "error" (fn raised), "crashed", "timeout"
    value: Any = None
    detail: str = ""
    wall_s: float = 0.0


@dataclass
class _Running:
    job: Job
    pid: int
    fd: int
    log: Any
    start: float
    chunks: list[bytes] = field(default_factory=list)


def _child(job: Job, fd: int, log_fd: int) -> None:
    code = 0
    try:
        os.dup2(log_fd, 1)
        os.dup2(log_fd, 2)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        try:
            payload = ("ok", job.fn(*job.args, **job.kwargs))
        except BaseException:  # noqa: BLE001 - everything goes back to the parent
            payload = ("error", traceback.format_exc(limit=8))
        try:
            data = pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # noqa: BLE001
            data = pickle.dumps(("error", "result not picklable:\n" + traceback.format_exc(limit=4)))
        view = memoryview(data)
        while view:
            n = os.write(fd, view)
            view = view[n:]
    except BaseException:  # noqa: BLE001
        code = 70
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except Exception:  # noqa: BLE001
            pass
        os._exit(code)


def _tail(log) -> str:
    try:
        log.seek(0)
        return log.read()[-3000:].decode("utf-8", "replace")
    except (OSError, ValueError):
        return ""


def run_jobs(jobs: list[Job], parallel: int = 1, on_done: Callable[[Outcome], None] | None = None) -> dict[Any, Outcome]:
    """Run ``jobs`` in forked children, at most ``parallel`` at once; results by key.

    ``on_done`` is called in the parent as each job finishes (for progress lines).
    """
    pending = list(jobs)
    running: dict[int, _Running] = {}
    results: dict[Any, Outcome] = {}
    sys.stdout.flush()
    sys.stderr.flush()

    def finish(r: _Running, status: str, detail: str = "") -> None:
        os.close(r.fd)
        _pid, wstatus = os.waitpid(r.pid, 0)
        wall = time.monotonic() - r.start
        data = b"".join(r.chunks)
        out: Outcome
        if status == "timeout":
            out = Outcome(r.job.key, "timeout", detail=f"killed after {r.job.timeout:.0f} s\n" + _tail(r.log), wall_s=wall)
        elif data:
            try:
                kind, value = pickle.loads(data)
            except Exception:  # noqa: BLE001
                out = Outcome(r.job.key, "crashed", detail="unreadable result\n" + _tail(r.log), wall_s=wall)
            else:
                if kind == "ok":
                    out = Outcome(r.job.key, "ok", value=value, wall_s=wall)
                else:
                    out = Outcome(r.job.key, "error", detail=str(value), wall_s=wall)
        else:
            if os.WIFSIGNALED(wstatus):
                how = f"killed by signal {os.WTERMSIG(wstatus)}"
            else:
                how = f"exited with status {os.WEXITSTATUS(wstatus)} and no result"
            out = Outcome(r.job.key, "crashed", detail=how + "\n" + _tail(r.log), wall_s=wall)
        r.log.close()
        results[r.job.key] = out
        if on_done:
            on_done(out)

    try:
        while pending or running:
            while pending and len(running) < max(1, parallel):
                job = pending.pop(0)
                rfd, wfd = os.pipe()
                log = tempfile.TemporaryFile()
                pid = os.fork()
                if pid == 0:  # child
                    os.close(rfd)
                    _child(job, wfd, log.fileno())
                os.close(wfd)
                running[rfd] = _Running(job, pid, rfd, log, time.monotonic())
            now = time.monotonic()
            wait = min(r.start + r.job.timeout for r in running.values()) - now
            ready, _, _ = select.select(list(running), [], [], max(0.0, wait))
            for fd in ready:
                r = running[fd]
                chunk = os.read(fd, 1 << 16)
                if chunk:
                    r.chunks.append(chunk)
                else:
                    del running[fd]
                    finish(r, "done")
            now = time.monotonic()
            for fd, r in list(running.items()):
                if now >= r.start + r.job.timeout:
                    try:
                        os.kill(r.pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                    del running[fd]
                    finish(r, "timeout")
    finally:
        for r in running.values():  # interrupted: leave no child behind
            try:
                os.kill(r.pid, signal.SIGKILL)
                os.waitpid(r.pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
            os.close(r.fd)
            r.log.close()
    return results


def run_one(fn: Callable[..., Any], *args: Any, timeout: float = 60.0, **kwargs: Any) -> Outcome:
    """Run one callable in a forked child."""
    return run_jobs([Job(0, fn, args, kwargs, timeout)])[0]
