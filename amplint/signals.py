"""SIGINT, SIGTERM and SIGHUP behave alike: the run stops cleanly and exits with 128 + signal.

Outside a critical section the signal raises :class:`Interrupted` (a ``KeyboardInterrupt``) at
once. Inside :func:`critical` (a file being replaced, the cache being saved) it is only recorded;
the section acts on it at its next :func:`checkpoint` (before the point of no return: the
temporary file is removed and the original stays as it was) or when it ends (after the rename:
the file is complete), so a signal never leaves a half-done step behind. SIGKILL cannot be
caught: what it leaves (a temporary file) is removed by the next run.
"""

from __future__ import annotations

import contextlib
import signal
from typing import Iterator

_SIGNALS = tuple(getattr(signal, n) for n in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, n))
_pending: int | None = None
_depth = 0
_installed = False


class Interrupted(KeyboardInterrupt):
    def __init__(self, signum: int = signal.SIGINT) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return 128 + int(self.signum)


def _handler(signum, frame) -> None:  # noqa: ARG001 - the signal module's signature
    global _pending
    if _depth > 0:
        if _pending is None:
            _pending = signum
        return
    raise Interrupted(signum)


def install() -> None:
    """Install the handlers (main thread of the main process). A signal the parent set to be
    ignored (``nohup``) stays ignored."""
    global _installed
    if _installed:
        return
    import threading

    if threading.current_thread() is not threading.main_thread():
        return
    for sig in _SIGNALS:
        try:
            if signal.getsignal(sig) is signal.SIG_IGN:
                continue
            signal.signal(sig, _handler)
        except (OSError, ValueError):  # pragma: no cover - not allowed here
            pass
    _installed = True


def _worker_handler(signum, frame) -> None:  # noqa: ARG001
    """A fixing worker told to stop (the parent terminates the pool): inside a critical section
    the signal is deferred like in the parent (the step in progress is undone or completed; the
    worker's task loop then exits quietly); anywhere else the worker ends at once, quietly (it
    holds nothing half-written)."""
    global _pending
    if _depth > 0:
        if _pending is None:
            _pending = signum
        return
    import os

    os._exit(128 + int(signum))


def worker_defaults(fixing: bool = False) -> None:
    """In a pool worker: Ctrl-C goes to the whole process group, but only the parent acts on it
    (it stops the pool); a worker dies quietly when the parent terminates it. A worker that
    writes files (``fixing``) first finishes or undoes the write it is in."""
    for sig in _SIGNALS:
        try:
            if sig == signal.SIGINT:
                signal.signal(sig, signal.SIG_IGN)
            else:
                signal.signal(sig, _worker_handler if fixing else signal.SIG_DFL)
        except (OSError, ValueError):  # pragma: no cover
            pass


def pending() -> int | None:
    return _pending


def checkpoint() -> None:
    """Inside a critical section: stop here if a signal arrived."""
    if _pending is not None:
        raise Interrupted(_pending)


@contextlib.contextmanager
def critical() -> Iterator[None]:
    global _depth
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        if _depth == 0 and _pending is not None:
            raise Interrupted(_pending)
