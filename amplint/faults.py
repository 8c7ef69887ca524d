"""Test hook for the fault-injection suite (``tests/test_faults.py``); inert unless enabled.

``AMPLINT_TEST_PAUSE=fix:replace`` (a comma-separated list of point names) and
``AMPLINT_TEST_PAUSE_DIR=DIR``: the first time amplint reaches a named point it creates
``DIR/<point>.reached`` (holding its pid and the path it is working on) and then waits until
``DIR/<point>.go`` exists, so that a test can deliver a signal, kill the process or save the
file "as an editor" at exactly that moment. A pending SIGINT/SIGTERM ends the wait (the
caller's next checkpoint acts on it). Without the variables :func:`pause` is a no-op that costs
one dictionary lookup at import time.

Points (in the order ``--fix`` reaches them): ``fix:read`` (file read, fixes not computed yet),
``fix:open`` (temporary file created, empty), ``fix:write`` (fixed bytes written, not yet
synced), ``fix:fsync`` (synced; identity not yet checked), ``fix:replace`` (identity checked;
the rename comes next), ``fix:inplace`` (in-place fallback: the original is about to be
overwritten); ``cache:open``, ``cache:write``, ``cache:replace`` for the cache save;
``run:worker`` (a pool worker got its first batch).
"""

from __future__ import annotations

import os

_POINTS = frozenset(p.strip() for p in os.environ.get("AMPLINT_TEST_PAUSE", "").split(",") if p.strip())
_DIR = os.environ.get("AMPLINT_TEST_PAUSE_DIR", "")
_SEEN: set[str] = set()


def pause(point: str, path: object = "") -> None:
    if not _POINTS or point not in _POINTS or point in _SEEN or not _DIR:
        return
    _SEEN.add(point)
    import time

    from . import signals

    name = point.replace(":", "-")
    # one temporary name per process: pool workers may reach the same point at the same moment
    tmp = os.path.join(_DIR, f"{name}.reached.{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(f"{os.getpid()}\n{path}\n")
    os.replace(tmp, os.path.join(_DIR, name + ".reached"))
    go = os.path.join(_DIR, name + ".go")
    deadline = time.monotonic() + 120
    while not os.path.exists(go) and time.monotonic() < deadline:
        if signals.pending():
            return
        time.sleep(0.005)
