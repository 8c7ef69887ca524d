"""Context managers written as generators (``@contextlib.contextmanager``): ``with
amp_step(scaler, opt): body`` runs the generator's code up to its ``yield``, then the ``with``
body, then the code after the ``yield`` (a step on exit), not the whole function on entry."""

from __future__ import annotations

import libcst as cst

from .frames import Frame, Outs
from .state import State

_CONTEXTMANAGERS = ("contextlib.contextmanager", "contextmanager")


class YieldTo:
    """The ``with`` body a generator context manager runs at its ``yield``: in the frame of the
    ``with`` statement; what leaves the body other than normally (``break``, ``return``) is kept
    for that statement."""

    __slots__ = ("frame", "body", "callee", "outs", "ran")

    def __init__(self, frame: Frame, body: list, callee) -> None:
        self.frame = frame
        self.body = body
        self.callee = callee
        self.outs = Outs()
        self.ran = False


class Contexts:
    """Mixin of :class:`~.interpret.Flow`."""

    def with_body(self, frame: Frame, s: cst.With, body: list, states: set[State], run_header) -> Outs:
        """``run_header(states)`` runs the ``with`` header's calls; a call of a generator context
        manager of the analysed code runs ``body`` at its ``yield``; otherwise ``body`` runs after
        the header."""
        pending = []
        for wi in s.items:
            cs = self.m.call_of.get(wi.item) if isinstance(wi.item, cst.Call) else None
            callee = self.resolve(frame, cs) if cs is not None else None
            if callee is not None and _is_contextmanager(callee[0]) and _yields(callee[0]):
                pending.append((cs.node, YieldTo(frame, body, callee[0])))
        if len(pending) != 1:  # (two generator managers in one ``with``: the body runs after both)
            return self.block(frame, body, run_header(states))
        node, yt = pending[0]
        self._yield_to[node] = yt
        try:
            cur = run_header(states)
        finally:
            del self._yield_to[node]
        if not yt.ran:  # the manager was not followed (too deep, transparent): the body runs here
            return self.block(frame, body, cur)
        out = yt.outs
        out.normal = cur
        return out

    def yield_point(self, frame: Frame, states: set[State]) -> set[State]:
        """A ``yield`` statement of a generator context manager being followed: the ``with``
        body runs here."""
        yt = frame.yield_to
        o = self.block(yt.frame, yt.body, states)
        yt.outs.merge(o, normal=False)
        yt.ran = True
        return o.normal


def _is_contextmanager(func) -> bool:
    return any(d in _CONTEXTMANAGERS for d in func.decorators)


def _yields(func) -> bool:
    """The function has a ``yield`` statement of its own (not one of a nested function)."""
    from ..syntax import children

    stack = list(func.body)
    while stack:
        n = stack.pop()
        if isinstance(n, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        if isinstance(n, cst.Expr) and isinstance(n.value, cst.Yield):
            return True
        stack.extend(children(n))
    return False
