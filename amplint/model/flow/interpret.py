"""The interpreter: statements, branches, loops to a fixpoint, ``try``/``finally``.

Each function that touches a scaler is interpreted over its statements with a bounded *set* of
states (:mod:`.state`), so that branches on one condition stay correlated (:mod:`.conditions`);
``break``/``continue``/``return``/``raise``/``finally`` route states where Python would; a
loop's head is iterated until it no longer changes (a post-fixpoint, see
:func:`.state.covered`): the first passes keep every path apart, later ones accumulate and
prune covered states (:func:`.state.prune`), which climbs a finite lattice, and a loop that does not converge within
:data:`MAX_LOOP_PASSES` is recorded in ``Flow.unconverged`` (its observations are marked, and
no rule concludes from them). Calls are events (:mod:`.calls`) or the interpretation of a callee
at the call site (:mod:`.interproc`). What reaches each event is recorded as an
:class:`Observation`, which the named queries (:mod:`.queries`) read for the rules.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import libcst as cst

from ..structure import Alt, Bind, CallSite, FunctionInfo, Region
from ..syntax import literal_value
from .calls import Calls
from .conditions import Conditions, amp_switch, mentions_any
from .interproc import Interproc, target_heads
from .monitors import announce
from .state import State, prune, widen

MAX_LOOP_PASSES = 8
#: passes after which a loop head is widened to its join classes
WIDEN_AFTER = 3
# (statement, state) pairs interpreted per top-level function before the analysis of that function
# is given up, and per file; the public corpus's most complex function needs about 156,000
MAX_STEPS = 600_000
MAX_FILE_STEPS = 2_000_000


class OverBudget(Exception):
    pass


@dataclass(eq=False)
class Observation:
    """An event on one call site, in one calling context, with the states that reach it.

    kind: ``create``, ``scale``, ``scaled_backward``, ``backward`` (plain), ``unscale``, ``step``,
    ``update``, ``opt_step``, ``zero_grad``, ``clip``, ``backedge`` (a loop's back edge: the
    states that start the next iteration) and ``recreate`` (a constructor that runs again in
    every iteration of the loop that steps its scaler)."""

    kind: str
    node: cst.CSTNode
    site: CallSite | None
    scaler: str | None
    opt: str | None
    regions: tuple[Region, ...]
    func: FunctionInfo
    states: set[State]
    inlined: bool = False
    unconverged: bool = False

    def in_region(self, *kinds: str) -> Region | None:
        for r in reversed(self.regions):
            if r.kind in kinds:
                return r
        return None

    @property
    def grad_disabled(self) -> Region | None:
        for r in reversed(self.regions):
            if r.kind == "no_grad":
                return r
            if r.kind == "enable_grad":
                return None
        return None


class Outs:
    __slots__ = ("normal", "brk", "cont", "ret", "exc")

    def __init__(self, normal=None, brk=None, cont=None, ret=None, exc=None):
        self.normal: set[State] = normal if normal is not None else set()
        self.brk: set[State] = brk if brk is not None else set()
        self.cont: set[State] = cont if cont is not None else set()
        self.ret: set[State] = ret if ret is not None else set()
        self.exc: set[State] = exc if exc is not None else set()

    def merge(self, other: "Outs", normal: bool = True) -> "Outs":
        if normal:
            self.normal |= other.normal
        self.brk |= other.brk
        self.cont |= other.cont
        self.ret |= other.ret
        self.exc |= other.exc
        return self

    def copy(self) -> "Outs":
        return Outs(set(self.normal), set(self.brk), set(self.cont), set(self.ret), set(self.exc))


class Frame:
    __slots__ = ("func", "env", "tag", "ctx_regions", "depth", "stack", "scaler_params")

    def __init__(self, func, env, tag, ctx_regions, depth, stack, scaler_params=frozenset()):
        self.func: FunctionInfo = func
        self.env: dict[str, str] = env
        self.tag: str = tag
        self.ctx_regions: tuple[Region, ...] = ctx_regions
        self.depth: int = depth
        self.stack: tuple[FunctionInfo, ...] = stack
        self.scaler_params: frozenset[str] = scaler_params


def _body(node: cst.CSTNode) -> list[cst.CSTNode]:
    if isinstance(node, cst.IndentedBlock):
        return list(node.body)
    if isinstance(node, cst.SimpleStatementSuite):
        return [node]
    return []


class Flow(Conditions, Calls, Interproc):
    def __init__(self, model) -> None:
        self.m = model
        self.scalers = model.scalers
        self.observations: list[Observation] = []
        self._obs_index: dict[tuple, Observation] = {}
        self._loop_depth = 0
        self._loop_memo: dict[tuple, Outs] = {}
        self._assigned_in: dict[cst.CSTNode, frozenset[str]] = {}
        self._budget = MAX_STEPS
        self._file_budget = MAX_FILE_STEPS
        self.abandoned: list[FunctionInfo] = []  # functions too complex to follow (no findings)
        self.unconverged: list[cst.CSTNode] = []  # loops whose head did not stabilise
        self._init_interproc()
        self._init_calls()
        self._init_conditions()

    # --- driver ------------------------------------------------------------------------------

    def root_frame(self, func: FunctionInfo) -> Frame:
        return Frame(func, {}, "", (), 0, (func,))

    def run(self) -> None:
        for func in self.m.relevant_functions():
            frame = self.root_frame(func)
            mark = len(self.observations)
            self._budget = min(MAX_STEPS, self._file_budget)
            start = self._budget
            try:
                self.block(frame, func.body, self.entry_states(func))
            except OverBudget:
                # give up on this function: none of its observations is kept, so no rule
                # concludes anything from it
                for obs in self.observations[mark:]:
                    self._obs_index.pop(_obs_key(obs), None)
                del self.observations[mark:]
                self.abandoned.append(func)
            self._file_budget -= start - max(self._budget, 0)

    def observe(self, frame: Frame, kind: str, node: cst.CSTNode, site: CallSite | None, scaler: str | None,
                opt: str | None, states: Iterable[State], regions: tuple[Region, ...] | None = None) -> Observation:
        regions = regions if regions is not None else frame.ctx_regions + (site.regions if site is not None else ())
        key = (kind, node, scaler, opt, tuple(id(r) for r in regions))
        obs = self._obs_index.get(key)
        if obs is None:
            obs = Observation(kind, node, site, scaler, opt, regions, frame.func, set(), inlined=frame.depth > 0)
            self._obs_index[key] = obs
            self.observations.append(obs)
        obs.states.update(states)
        return obs

    def widen(self, states: set[State]) -> set[State]:
        return widen(states, amp_switch, self._relevant_keys)

    # --- statements --------------------------------------------------------------------------

    def block(self, frame: Frame, stmts: list[cst.CSTNode], states: set[State]) -> Outs:
        out = Outs()
        cur = states
        for s in stmts:
            if not cur:
                break
            o = self.stmt(frame, s, cur)
            out.merge(o, normal=False)
            cur = o.normal
        out.normal = cur
        return out

    def stmt(self, frame: Frame, s: cst.CSTNode, states: set[State]) -> Outs:
        self._budget -= len(states)
        if self._budget < 0:
            raise OverBudget
        t = type(s)
        seqs = self.m.seqs
        if t is cst.SimpleStatementLine or t is cst.SimpleStatementSuite:
            cur = states
            for small in s.body:  # type: ignore[attr-defined]
                st = type(small)
                if st is cst.Pass:
                    continue
                if st is cst.Break:
                    return Outs(brk=cur)
                if st is cst.Continue:
                    return Outs(cont=cur)
                cur = self.items(frame, seqs.get(small, ()), cur)
                if st is cst.Return:
                    return Outs(ret=cur)
                if st is cst.Raise:
                    return Outs(exc=cur)
                if st is cst.Assign or st is cst.AnnAssign or st is cst.AugAssign:
                    cur = self.assign(frame, small, cur)
                if not cur:
                    break
            return Outs(normal=cur)
        if t is cst.If:
            cur = self.items(frame, seqs.get(s, ()), states)
            then = self.assume(frame, s.test, True, cur)
            other = self.assume(frame, s.test, False, cur)
            out = self.block(frame, _body(s.body), then)
            if s.orelse is None:
                out.normal |= other
            elif isinstance(s.orelse, cst.If):
                out.merge(self.stmt(frame, s.orelse, other))
            else:
                out.merge(self.block(frame, _body(s.orelse.body), other))
            out.normal = self.widen(out.normal)
            return out
        if t is cst.For or t is cst.While:
            return self.loop(frame, s, states)
        if t is cst.With:
            cur = self.items(frame, seqs.get(s, ()), states)
            for wi in s.items:
                if wi.asname is not None:
                    cur = self.rebind(frame, target_heads(wi.asname.name), cur)
            return self.block(frame, _body(s.body), cur)
        if t is cst.Try or t is cst.TryStar:
            return self.try_(frame, s, states)
        if t is cst.Match:
            cur = self.items(frame, seqs.get(s, ()), states)
            out = Outs()
            irrefutable = False
            for case in s.cases:
                out.merge(self.block(frame, _body(case.body), cur))
                if isinstance(case.pattern, cst.MatchAs) and case.pattern.pattern is None and case.guard is None:
                    irrefutable = True
            if not irrefutable:
                out.normal |= cur
            return out
        return Outs(normal=states)  # def / class: nothing runs now

    def items(self, frame: Frame, seq, states: set[State]) -> set[State]:
        cur = states
        for item in seq:
            if not cur:
                return cur
            if type(item) is Alt:
                if item.test is not None:
                    a = self.items(frame, item.then, self.assume(frame, item.test, True, cur))
                    b = self.items(frame, item.orelse, self.assume(frame, item.test, False, cur))
                else:
                    a = self.items(frame, item.then, cur)
                    b = cur
                cur = self.widen(a | b)
            elif type(item) is Bind:
                cur = self.assign(frame, item.node, cur)
            elif not item.in_lambda:
                cur = self.call(frame, item, cur)
        return cur

    # --- loops -------------------------------------------------------------------------------

    def loop(self, frame: Frame, s: cst.For | cst.While, states: set[State]) -> Outs:
        key = (frame, s, tuple(sorted(frame.env.items())), frozenset(states))
        hit = self._loop_memo.get(key)
        if hit is None:
            cur = self.items(frame, self.m.seqs.get(s, ()), states)
            self._loop_depth += 1
            try:
                hit = self._loop(frame, s, cur)
            finally:
                self._loop_depth -= 1
            self._loop_memo[key] = hit
        return hit.copy()

    def _loop(self, frame: Frame, s: cst.For | cst.While, cur: set[State]) -> Outs:
        infinite = isinstance(s, cst.While) and literal_value(s.test) is True
        targets = target_heads(s.target) if isinstance(s, cst.For) else frozenset()
        assigned = self.loop_assigned(s) | targets
        canon_assigned = frozenset(self.canon(frame, a) or a for a in assigned)
        # ``for opt in optimizers: scaler.step(opt)``, ``for name in opts: opt = opts[name]``: one
        # training iteration that steps a different optimizer per pass, never empty
        variant = self.loop_variant(frame, s, targets) if isinstance(s, cst.For) else frozenset()
        per_opt = bool(variant) and self.over_optimizers(frame, s, variant)
        canon_variant = frozenset(self.canon(frame, t) or t for t in variant)
        entry = cur if per_opt else {self.new_iteration(st) for st in cur}
        head = entry
        out = Outs()
        body = _body(s.body)
        carried: set[State] = set()
        iterated: set[State] = set()
        converged = False
        for n in range(MAX_LOOP_PASSES):
            body_in = head
            if isinstance(s, cst.For):
                body_in = self.rebind(frame, targets, body_in)
            elif not infinite:
                body_in = self.assume(frame, s.test, True, body_in)
            o = self.block(frame, body, body_in)
            out.merge(o, normal=False)
            raw = o.normal | o.cont
            back = {self.drop_target_stages(st, canon_variant) for st in raw}
            if back:
                self.observe(frame, "backedge", s, None, None, None, back, regions=frame.ctx_regions)
                self.per_iteration_creates(frame, back)
            if per_opt:
                back = {self.next_optimizer(st, canon_variant, canon_assigned) for st in raw}
                carried |= back
            else:
                back = {self.next_iteration(st, canon_assigned) for st in back}
                iterated |= back
            # the first passes restart from the entry (precise, path by path); later ones
            # accumulate and drop the states another one covers, which climbs the (finite)
            # lattice and so converges
            new_head = self.widen(entry | back) if n + 1 < WIDEN_AFTER else self.widen(prune(head | back))
            if new_head == head:
                converged = True  # a post-fixpoint: the head covers what comes back
                break
            head = new_head
        if not converged:
            self.unconverged.append(s)
        exits: set[State] = set()
        if not infinite:
            exits = head if isinstance(s, cst.For) else self.assume(frame, s.test, False, head)
            if isinstance(s, cst.For) and not per_opt and iterated:
                # a training loop that never runs once (an empty loader) is not what anyone means:
                # the path that skips it is kept, but as speculative
                exits = self.widen({st.with_path(approx=True) if st in entry and st not in iterated else st
                                    for st in exits})
            if per_opt and carried:
                exits = self.widen(carried)  # at least one optimizer was stepped
        ret = out.ret if per_opt else {self.new_iteration(st) for st in out.ret}
        result = Outs(ret=ret, exc=out.exc)
        if s.orelse is not None and exits:
            result.merge(self.block(frame, _body(s.orelse.body), exits))
        else:
            result.normal |= exits
        # ``break`` (and ``return`` above) leave the loop mid-iteration: what that iteration
        # stepped is not the enclosing iteration's
        result.normal |= out.brk if per_opt else {self.new_iteration(st) for st in out.brk}
        result.normal = self.widen(result.normal)
        return result

    def loop_assigned(self, s: cst.CSTNode) -> frozenset[str]:
        hit = self._assigned_in.get(s)
        if hit is None:
            names = {b.name for b in self.m.bindings if s in b.loops and b.kind != "item"}
            hit = self._assigned_in[s] = frozenset(names)
        return hit

    def loop_variant(self, frame: Frame, s: cst.For, targets: frozenset[str]) -> frozenset[str]:
        """The loop's targets, and the names its body binds from them (``opt = opts[name]``)."""
        out = set(targets)
        changed = True
        while changed:
            changed = False
            for b in self.m.bindings:
                if b.func is frame.func and s in b.loops and b.name not in out and b.kind in ("assign", "walrus") \
                        and b.value is not None and _mentions(b.value, out):
                    out.add(b.name)
                    changed = True
        return frozenset(out)

    # --- iteration boundaries ------------------------------------------------------------------

    def new_iteration(self, st: State) -> State:
        return st.map_scalers(lambda _k, f: f.but(iters=None) if f.iters is not None else f)

    def next_iteration(self, st: State, assigned: frozenset[str]) -> State:
        p = st.path
        assume = frozenset(x for x in p.assume if not mentions_any(x[0], assigned))
        scaled = frozenset(x for x in p.scaled if x[0] not in assigned)
        dropped = self.undrop(p.dropped, assigned) if p.dropped else p.dropped
        if assume != p.assume or scaled != p.scaled or p.handled or dropped != p.dropped:
            st = st.with_path(assume=assume, scaled=scaled, handled=False, dropped=dropped)
        st = self.new_iteration(st)
        return announce(st, "next_iteration", depth=self._loop_depth)

    def next_optimizer(self, st: State, targets: frozenset[str], assigned: frozenset[str]) -> State:
        """Back edge of a loop over optimizers: the next pass's optimizer starts READY; this
        pass's stage moves to ``done`` and its steps stay in the iteration under a renamed key."""
        def rename(o: str) -> str:
            return o + "*" if not o.endswith("*") and mentions_any(o, targets) else o

        def move(_k, f):
            moved = frozenset(x for x in f.stages if mentions_any(x[0], targets))
            iters = f.iters
            if iters is not None:
                iters = (iters[0], frozenset(rename(o) for o in iters[1]), frozenset(rename(o) for o in iters[2]))
            if not moved and iters == f.iters:
                return f
            return f.but(stages=f.stages - moved, done=f.done | {(x[1], x[2]) for x in moved}, iters=iters)

        st = st.map_scalers(move)
        p = st.path
        assume = frozenset(x for x in p.assume if not mentions_any(x[0], assigned))
        scaled = frozenset(x for x in p.scaled if x[0] not in assigned)
        return st.with_path(assume=assume, scaled=scaled) if (assume, scaled) != (p.assume, p.scaled) else st

    def drop_target_stages(self, st: State, targets: frozenset[str]) -> State:
        if not targets:
            return st
        return st.map_scalers(lambda _k, f: f.but(stages=frozenset(x for x in f.stages if not mentions_any(x[0], targets)))
                              if any(mentions_any(x[0], targets) for x in f.stages) else f)

    # --- try -----------------------------------------------------------------------------------

    def try_(self, frame: Frame, s: cst.Try | cst.TryStar, states: set[State]) -> Outs:
        body = self.block(frame, _body(s.body), states)
        combined = Outs(brk=set(body.brk), cont=set(body.cont), ret=set(body.ret))
        if s.orelse is not None:
            combined.merge(self.block(frame, _body(s.orelse.body), body.normal))
        else:
            combined.normal |= body.normal
        if s.handlers:
            # An exception may come from anywhere in the body; it is modelled as raised before the
            # body's events (the optimistic choice) plus the explicit ``raise`` statements.
            handler_in = {st if st.path.handled else st.with_path(handled=True) for st in set(states) | body.exc}
            for h in s.handlers:
                cur = handler_in
                if h.name is not None:
                    cur = self.rebind(frame, target_heads(h.name.name), cur)
                combined.merge(self.block(frame, _body(h.body), cur))
        else:
            combined.exc |= body.exc
        if s.finalbody is None:
            return combined
        fin = _body(s.finalbody.body)
        result = Outs()
        for kind in ("normal", "brk", "cont", "ret", "exc"):
            incoming = getattr(combined, kind)
            if not incoming:
                continue
            f = self.block(frame, fin, incoming)
            getattr(result, kind).update(f.normal)
            result.merge(f, normal=False)
        return result


def _obs_key(obs: Observation) -> tuple:
    return (obs.kind, obs.node, obs.scaler, obs.opt, tuple(id(r) for r in obs.regions))


def _mentions(node: cst.CSTNode, names) -> bool:
    from ..syntax import children

    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, cst.Name) and n.value in names:
            return True
        if isinstance(n, (cst.Lambda, cst.FunctionDef)):
            continue
        stack.extend(children(n))
    return False
