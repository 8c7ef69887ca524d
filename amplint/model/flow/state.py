"""The abstract state of the typestate flow, and its lattice.

A :class:`State` holds the facts of one path (the interpreter keeps a bounded *set* of states:
the disjunctive completion of this lattice, see :func:`widen`):

- ``path``: :class:`PathFacts`, facts about the path itself: the outcomes of the conditions
  it branched on (``assume``: must), the names bound to ``S.scale(...)`` (``scaled``: must), the
  unscaled backwards since the last step or ``zero_grad`` (``plain``: must), and how far it can
  be trusted (``handled``: through an ``except`` handler; ``approx``: re-branched on a
  condition whose outcome widening forgot, or past a loop taken zero times; ``dropped``: the
  conditions widening forgot; all three may-facts);
- ``scalers``: one :class:`ScalerFacts` per scaler key, GradScaler's own state machine;
- ``mon``: one value per monitor (:mod:`.monitors`), the per-rule properties.

The fields of :class:`ScalerFacts` and of :class:`PathFacts` are must-facts (they hold on every
path a state stands for) unless noted as may-facts. ``join`` is the least upper bound of two
states in that order and ``leq`` the order itself; the lattice laws (join commutative,
associative, idempotent and an upper bound; widen bounded and above its input) are
property-tested in ``tests/test_model_lattice.py``.
"""

from __future__ import annotations

READY, UNSCALED, STEPPED = "R", "U", "S"
SCALED, UNSCALED_GRADS, CLEAN, IMPLIED = "scaled", "unscaled", "clean", "implied"

#: the most states kept per program point before :func:`widen` merges them
MAX_STATES = 48


class ScalerFacts:
    """GradScaler's state machine for one scaler, on one path (all must-facts).

    - ``ready``: optimizers not listed in ``stages`` are READY (after the constructor or
      ``update()``); when False their stage is unknown;
    - ``stages``: ``(optimizer key, UNSCALED|STEPPED, node that put it there)``;
    - ``grads``: ``(SCALED|UNSCALED_GRADS|CLEAN|IMPLIED, node)``: whether the gradients are still
      multiplied by the scale (IMPLIED: assumed scaled at the entry of a function whose own
      protocol implies it, see the interprocedural layer), or None when unknown;
    - ``sbw``: scaled backwards since the last step;
    - ``exact``: ``sbw`` lists every scaled backward since the last step (no unknown code had
      the scaler, no path that ran another one was merged in);
    - ``iters``: ``(updates this iteration, counted 0, 1, 2 = "two or more", optimizers stepped
      before the last update, optimizers stepped since)``, or None;
    - ``done``: ``(UNSCALED|STEPPED, node)`` moves of earlier passes of a loop over optimizers.

    A scaler a state has no record for has :data:`NOFACTS`: nothing known but that no scaled
    backward ran (the entry of the analysed code is taken to start clean); :data:`LOST` is top.
    """

    __slots__ = ("ready", "stages", "grads", "sbw", "exact", "iters", "done", "_h")

    def __init__(self, ready=False, stages=frozenset(), grads=None, sbw=frozenset(), exact=True, iters=None,
                 done=frozenset()):
        self.ready: bool = ready
        self.stages: frozenset = stages
        self.grads = grads
        self.sbw: frozenset = sbw
        self.exact: bool = exact
        self.iters = iters
        self.done: frozenset = done
        self._h = hash((ready, stages, grads, sbw, exact, iters, done))

    def __hash__(self) -> int:
        return self._h

    def __eq__(self, o: object) -> bool:
        return self is o or (type(o) is ScalerFacts and self._h == o._h and self.stages == o.stages  # type: ignore[union-attr]
                             and self._t() == o._t())  # type: ignore[union-attr]

    def _t(self) -> tuple:
        return (self.ready, self.stages, self.grads, self.sbw, self.exact, self.iters, self.done)

    def but(self, **kw) -> "ScalerFacts":
        get = kw.get
        return ScalerFacts(get("ready", self.ready), get("stages", self.stages), get("grads", self.grads),
                           get("sbw", self.sbw), get("exact", self.exact), get("iters", self.iters),
                           get("done", self.done))

    def stage_of(self, opt: str):
        for o, st, node in self.stages:
            if o == opt:
                return st, node
        return (READY, None) if self.ready else None

    def with_stage(self, opt: str, st: str, node) -> frozenset:
        return frozenset(x for x in self.stages if x[0] != opt) | {(opt, st, node)}

    @property
    def all_ready(self) -> bool:
        return self.ready and not self.stages and not self.done

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        stages = sorted((o, st) for o, st, _n in self.stages)
        grads = self.grads[0] if self.grads else None
        iters = (self.iters[0], sorted(self.iters[1]), sorted(self.iters[2])) if self.iters else None
        return (f"ScalerFacts(ready={self.ready}, stages={stages}, grads={grads}, sbw={len(self.sbw)}, "
                f"exact={self.exact}, iters={iters}, done={len(self.done)})")


#: no record: nothing known (but no scaled backward ran on this path)
NOFACTS = ScalerFacts()
#: the facts of a scaler right after its constructor
FRESH = ScalerFacts(ready=True)
#: top: unknown code had the scaler, so even "no scaled backward seen" is no evidence
LOST = ScalerFacts(exact=False)


def join_scaler(a: ScalerFacts, b: ScalerFacts) -> ScalerFacts:
    if a == b:
        return a
    return ScalerFacts(
        ready=a.ready and b.ready and a.stages == b.stages and a.done == b.done,
        stages=a.stages & b.stages,
        grads=a.grads if a.grads == b.grads else None,
        sbw=a.sbw & b.sbw,
        exact=a.exact and b.exact and a.sbw == b.sbw,
        iters=a.iters if a.iters == b.iters else None,
        done=a.done & b.done,
    )


def leq_scaler(a: ScalerFacts, b: ScalerFacts) -> bool:
    """``a`` is at least as precise as ``b``: every fact of ``b`` holds in ``a``."""
    if b.ready and not (a.ready and a.stages == b.stages and a.done == b.done):
        return False
    if b.exact and not (a.exact and a.sbw == b.sbw):
        return False
    return (b.stages <= a.stages and b.sbw <= a.sbw and b.done <= a.done
            and (b.grads is None or b.grads == a.grads) and (b.iters is None or b.iters == a.iters))


class PathFacts:
    __slots__ = ("assume", "scaled", "plain", "handled", "approx", "dropped", "_h")

    def __init__(self, assume=frozenset(), scaled=frozenset(), plain=frozenset(), handled=False, approx=False,
                 dropped=frozenset()):
        self.assume: frozenset = assume  # (condition key, outcome)
        self.scaled: frozenset = scaled  # (name key, scaler key)
        self.plain: frozenset = plain  # plain backward nodes since the last step / zero_grad
        self.handled: bool = handled
        self.approx: bool = approx
        self.dropped: frozenset = dropped
        self._h = hash((assume, scaled, plain, handled, approx, dropped))

    def __hash__(self) -> int:
        return self._h

    def __eq__(self, o: object) -> bool:
        return self is o or (type(o) is PathFacts and self._h == o._h and self._t() == o._t())  # type: ignore[union-attr]

    def _t(self) -> tuple:
        return (self.assume, self.scaled, self.plain, self.handled, self.approx, self.dropped)

    def but(self, **kw) -> "PathFacts":
        get = kw.get
        return PathFacts(get("assume", self.assume), get("scaled", self.scaled), get("plain", self.plain),
                         get("handled", self.handled), get("approx", self.approx), get("dropped", self.dropped))


EMPTY_PATH = PathFacts()


class State:
    """Immutable facts on one path. Unknown is the absence of a fact."""

    __slots__ = ("path", "scalers", "mon", "_h")

    def __init__(self, path: PathFacts = EMPTY_PATH, scalers: tuple = (), mon: tuple | None = None):
        self.path = path
        self.scalers: tuple[tuple[str, ScalerFacts], ...] = scalers  # sorted by key
        self.mon: tuple = mon if mon is not None else _monitor_inits()
        self._h = hash((path, scalers, self.mon))

    def __hash__(self) -> int:
        return self._h

    def __eq__(self, o: object) -> bool:
        return self is o or (type(o) is State and self._h == o._h and self.path == o.path  # type: ignore[union-attr]
                             and self.scalers == o.scalers and self.mon == o.mon)  # type: ignore[union-attr]

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"State({dict(self.scalers)}, assume={set(self.path.assume)})"

    # --- reading ---------------------------------------------------------------------------

    def facts(self, scaler: str) -> ScalerFacts:
        for k, f in self.scalers:
            if k == scaler:
                return f
        return NOFACTS

    def has(self, scaler: str) -> bool:
        return any(k == scaler for k, _f in self.scalers)

    def keys(self) -> list[str]:
        return [k for k, _f in self.scalers]

    @property
    def speculative(self) -> bool:
        """A path rules needing exact paths should not trust (see :class:`PathFacts`)."""
        return self.path.handled or self.path.approx

    def monitor(self, index: int):
        return self.mon[index]

    # --- building --------------------------------------------------------------------------

    def with_facts(self, scaler: str, facts: ScalerFacts) -> "State":
        old = self.scalers
        if len(old) == 1 and old[0][0] == scaler and facts != NOFACTS:
            return State(self.path, ((scaler, facts),), self.mon)
        items = [(k, f) for k, f in old if k != scaler]
        if facts != NOFACTS:
            items.append((scaler, facts))
            items.sort(key=_first)
        return State(self.path, tuple(items), self.mon)

    def with_path(self, **kw) -> "State":
        return State(self.path.but(**kw), self.scalers, self.mon)

    def with_monitor(self, index: int, value) -> "State":
        if self.mon[index] == value:
            return self
        mon = list(self.mon)
        mon[index] = value
        return State(self.path, self.scalers, tuple(mon))

    def map_scalers(self, fn) -> "State":
        items = []
        for k, f in self.scalers:
            g = fn(k, f)
            if g != NOFACTS:
                items.append((k, g))
        items_t = tuple(items)
        return self if items_t == self.scalers else State(self.path, items_t, self.mon)


def _first(kv):
    return kv[0]


# --- the lattice -----------------------------------------------------------------------------


def join(a: State, b: State) -> State:
    """The least upper bound: only the facts both paths agree on (monitors join their own)."""
    if a == b:
        return a
    pa, pb = a.path, b.path
    common = pa.assume & pb.assume
    forgot = {k for k, _v in (pa.assume | pb.assume) - common}
    path = PathFacts(
        assume=common,
        scaled=pa.scaled & pb.scaled,
        plain=pa.plain & pb.plain,
        handled=pa.handled or pb.handled,
        approx=pa.approx or pb.approx,
        dropped=pa.dropped | pb.dropped | frozenset(forgot),
    )
    fa, fb = dict(a.scalers), dict(b.scalers)
    items = []
    for k in sorted(fa.keys() | fb.keys()):
        g = join_scaler(fa.get(k, NOFACTS), fb.get(k, NOFACTS))
        if g != NOFACTS:
            items.append((k, g))
    mon = tuple(m.join(x, y) for m, x, y in zip(MONITORS, a.mon, b.mon))
    return State(path, tuple(items), mon)


def join_all(states) -> State:
    it = iter(states)
    out = next(it)
    for st in it:
        out = join(out, st)
    return out


def leq(a: State, b: State) -> bool:
    """``a`` is at least as precise as ``b`` (every fact of ``b`` holds in ``a``). The trust
    annotations (``handled``, ``approx``, ``dropped``) are outside the order: states with the
    same facts are one state, trusted when one of its paths is (:func:`_merge_flags`)."""
    pa, pb = a.path, b.path
    if not (pb.assume <= pa.assume and pb.scaled <= pa.scaled and pb.plain <= pa.plain):
        return False
    fa, fb = dict(a.scalers), dict(b.scalers)
    for k in fa.keys() | fb.keys():
        if not leq_scaler(fa.get(k, NOFACTS), fb.get(k, NOFACTS)):
            return False
    return all(m.leq(x, y) for m, x, y in zip(MONITORS, a.mon, b.mon))


def covered(states: set[State], by: set[State]) -> bool:
    """Every state of ``states`` is below some state of ``by`` (the Hoare order of the
    disjunctive domain): ``by`` is a post-fixpoint for ``states``."""
    return all(s in by or any(leq(s, t) for t in by) for s in states)


def prune(states: set[State]) -> set[State]:
    """Drop the states another state of the set covers (keeps the set's upper bounds).

    States that cover each other (the same facts, told apart only by their trust annotations,
    or by a scaler recorded as :data:`NOFACTS` that the other has no record for) become one
    state, merged as :func:`_merge_flags` merges them, so that the result does not depend on the
    order in which the set is iterated (which follows object addresses and the hash seed)."""
    if len(states) < 2:
        return states
    items = list(_merge_flags(states))
    out = set()
    for i, s in enumerate(items):
        same = []
        for j, t in enumerate(items):
            if j != i and leq(s, t):
                if not leq(t, s):
                    break  # strictly covered
                same.append(t)
        else:
            if min([s, *same], key=_canonical_key) is s:
                out.add(_trust_join(s, [s, *same]) if same else s)
    return out


def _canonical_key(st: State) -> tuple:  # an order on equivalent states that no address decides
    p = st.path
    return len(st.scalers), tuple(k for k, _f in st.scalers), p.approx, p.handled, len(p.dropped), sorted(p.dropped)


def _trust_join(rep: State, group: list[State]) -> State:
    """``rep`` trusted when one state of ``group`` is (exact, not through a handler), with every
    condition any of them forgot."""
    return rep.with_path(approx=all(st.path.approx for st in group), handled=all(st.path.handled for st in group),
                         dropped=frozenset().union(*(st.path.dropped for st in group)))


def widen(states: set[State], keep_key=None, relevant=frozenset(), prefer=None, cap: int = MAX_STATES) -> set[State]:
    """Bound a set of states: first merge states that differ only in how they were reached,
    then (over :data:`MAX_STATES`) forget branch outcomes that are neither AMP switches
    (``keep_key``) nor ``prefer``-red (conditions that choose between arms with protocol
    events), then those that are not AMP switches, then all of them, and at last join everything
    into one state. Each step returns a set every input state is below, so loops iterated with
    it converge."""
    states = _merge_flags(states)
    if len(states) <= cap:
        return states
    if prefer is not None and keep_key is not None:
        stripped = _same_dropped({_strip_assume(st, lambda k: keep_key(k) or prefer(k), relevant) for st in states})
        if len(stripped) <= cap:
            return stripped
        states = stripped
    stripped = _same_dropped({_strip_assume(st, keep_key, relevant) for st in states})
    if len(stripped) <= cap:
        return stripped
    stripped = _same_dropped({_strip_assume(st, None, relevant) for st in stripped})
    if len(stripped) <= cap:
        return stripped
    return {join_all(stripped)}


def _merge_flags(states: set[State]) -> set[State]:
    """Merge states that differ only in their trust flags: the facts hold exactly when one of
    them is exact (``approx``/``handled``: all), a forgotten condition stays forgotten."""
    if len(states) < 2 or not any(st.path.approx or st.path.handled or st.path.dropped for st in states):
        return states
    groups: dict[tuple, list[State]] = {}
    for st in states:
        p = st.path
        groups.setdefault((p.assume, p.scaled, p.plain, st.scalers, st.mon), []).append(st)
    if len(groups) == len(states):
        return states
    return {group[0] if len(group) == 1 else _trust_join(group[0], group) for group in groups.values()}


def _same_dropped(states: set[State]) -> set[State]:
    union: frozenset = frozenset().union(*(st.path.dropped for st in states))
    return {st if st.path.dropped == union else st.with_path(dropped=union) for st in states}


def _strip_assume(st: State, keep, relevant) -> State:
    assume = frozenset(a for a in st.path.assume if keep is not None and keep(a[0]))
    if assume == st.path.assume:
        return st
    forgot = {a[0] for a in st.path.assume - assume if a[0] in relevant}
    if forgot:
        return st.with_path(assume=assume, dropped=st.path.dropped | forgot)
    return st.with_path(assume=assume)


# --- monitors (registered by .monitors) ------------------------------------------------------

MONITORS: list = []
_INITS: list = [()]


def _monitor_inits() -> tuple:
    return _INITS[0]


def register_monitors(monitors: list) -> None:
    MONITORS[:] = monitors
    _INITS[0] = tuple(m.init for m in monitors)
