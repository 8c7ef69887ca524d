"""GradScaler's moves, one state at a time: ``unscale_(O)``, ``step(O)`` and ``update()`` on the
per-optimizer state machine (READY -> UNSCALED -> STEPPED -> ``update()`` -> READY) and on the
gradients. Pure functions of the state and the move, memoised by :meth:`.calls.Calls._moved`."""

from __future__ import annotations

from .monitors import announce
from .state import CLEAN, STEPPED, UNSCALED, UNSCALED_GRADS, State


def unscale(st: State, s: str, o, node) -> State:
    f = st.facts(s)
    st = st.with_facts(s, f.but(stages=f.with_stage(o, UNSCALED, node), grads=(UNSCALED_GRADS, node)))
    return announce(st, "unscale", scaler=s, opt=o, node=node)


def step(st: State, s: str, o, node) -> State:
    f = st.facts(s)
    n, prev, cur = f.iters if f.iters is not None else (0, frozenset(), frozenset())
    f = f.but(stages=f.with_stage(o, STEPPED, node), grads=(CLEAN, node), sbw=frozenset(), exact=True,
              iters=(n, prev, cur | {o}))
    st = st.with_facts(s, f)
    if st.path.plain:
        st = st.with_path(plain=frozenset())
    return announce(st, "step", scaler=s, opt=o, node=node)


def update(st: State, s: str, _o, node) -> State:
    f = st.facts(s)
    n, prev, cur = f.iters if f.iters is not None else (0, frozenset(), frozenset())
    f = f.but(ready=True, stages=frozenset(), iters=(min(n + 1, 2), prev | cur, frozenset()), done=frozenset())
    return announce(st.with_facts(s, f), "update", scaler=s, node=node)
