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

from typing import Iterable

import libcst as cst

from ..structure import Alt, Bind, CallSite, FunctionInfo, Region
from .calls import Calls
from .contexts import Contexts
from .atoms import amp_switch
from .conditions import Conditions
from .frames import Frame, Observation, Outs, OverBudget
from .interproc import Interproc, target_heads
from .hooks import Hooks
from .loops import Loops
from .per_optimizer import PerOptimizer
from .recreate import Recreations
from .state import MAX_STATES, State, widen
# (statement, state) pairs interpreted per top-level function before the analysis of that function
# is given up, and per file; the public corpus's most complex function needs about 156,000
MAX_STEPS = 600_000
MAX_FILE_STEPS = 2_000_000
#: more GradScaler calls in one function than any training step makes (generated code)
MANY_PROTOCOL_CALLS = 128
_PROTOCOL_METHODS = frozenset({"scale", "unscale_", "step", "update"})


#: past this many GradScaler calls a function is not followed at all (generated code; a warning)
MAX_PROTOCOL_CALLS = 1000


def protocol_calls(func: FunctionInfo) -> int:
    return sum(1 for cs in func.calls if cs.method in _PROTOCOL_METHODS)


def state_cap(n: int) -> int:
    """The states kept per program point in a function with ``n`` protocol calls:
    :data:`~.state.MAX_STATES`, fewer past :data:`MANY_PROTOCOL_CALLS`, so that the work stays
    linear in its size (each widening forgets more branch outcomes, never a protocol fact)."""
    return MAX_STATES if n <= MANY_PROTOCOL_CALLS else max(8, MAX_STATES * MANY_PROTOCOL_CALLS // n)


def _body(node: cst.CSTNode) -> list[cst.CSTNode]:
    if isinstance(node, cst.IndentedBlock):
        return list(node.body)
    if isinstance(node, cst.SimpleStatementSuite):
        return [node]
    return []


class Flow(Loops, Conditions, Calls, Recreations, Hooks, Contexts, PerOptimizer, Interproc):
    def __init__(self, model) -> None:
        self.m = model
        self.scalers = model.scalers
        self.observations: list[Observation] = []
        self._obs_index: dict[tuple, Observation] = {}
        self._loop_depth = 0
        self._loop_memo: dict[tuple, Outs] = {}
        self._assigned_in: dict[cst.CSTNode, frozenset[str]] = {}
        self._loop_backward: dict[cst.CSTNode, bool] = {}
        self._loop_protocol: dict[cst.CSTNode, bool] = {}
        self._loop_hands: dict[cst.CSTNode, bool] = {}
        self._touch_memo: dict = {}
        self._yield_to: dict = {}  # a generator context manager's call -> the ``with`` body it runs
        self._budget = MAX_STEPS
        self._file_budget = MAX_FILE_STEPS
        self.abandoned: list[tuple[FunctionInfo, str]] = []  # functions too complex to follow (no findings), why
        self.unconverged: list[cst.CSTNode] = []  # loops whose head did not stabilise
        self._init_interproc()
        self._init_calls()
        self._init_conditions()

    # --- driver ------------------------------------------------------------------------------

    def root_frame(self, func: FunctionInfo) -> Frame:
        return Frame(func, {}, "", (), 0, (func,))

    def run(self) -> None:
        # (a function that cannot meet a scaler is followed only where a root calls it)
        roots = [(func, None) for func in self.m.relevant_functions() if self.may_touch_scaler(func)] + self.virtual
        self.root_set = {func for func, self_cls in roots if self_cls is None}
        for func, self_cls in roots:
            calls = protocol_calls(func)
            if calls > MAX_PROTOCOL_CALLS:
                self.abandoned.append((func, f"{calls:,} GradScaler calls"))
                continue
            frame = self.root_frame(func)
            if self_cls is not None:
                frame.self_cls = self_cls
            mark = len(self.observations)
            self._move_memo.clear()
            self._budget = min(MAX_STEPS, self._file_budget)
            self._max_states = state_cap(calls)
            start = self._budget
            try:
                self.block(frame, func.body, self.entry_states(func))
            except OverBudget:
                # give up on this function: none of its observations is kept, so no rule
                # concludes anything from it
                for obs in self.observations[mark:]:
                    self._obs_index.pop(_obs_key(obs), None)
                del self.observations[mark:]
                self.abandoned.append((func, "deeply nested loops"))
            self._file_budget -= start - max(self._budget, 0)

    #: the functions analysed as roots of their own (plain functions, no subclass)
    root_set: set = set()

    def observe(self, frame: Frame, kind: str, node: cst.CSTNode, site: CallSite | None, scaler: str | None,
                opt: str | None, states: Iterable[State], regions: tuple[Region, ...] | None = None) -> Observation:
        regions = regions if regions is not None else frame.ctx_regions + (site.regions if site is not None else ())
        key = (kind, node, scaler, opt, tuple(id(r) for r in regions))
        obs = self._obs_index.get(key)
        if obs is None:
            obs = Observation(kind, node, site, scaler, opt, regions, frame.func, set(), inlined=frame.depth > 0)
            self._obs_index[key] = obs
            self.observations.append(obs)
        if frame.entry is not None and kind == "clip":
            # reached through a plain helper (another module's, or a utility of this one): the
            # call of the helper is what is right or wrong, not the clip in it
            obs.entries.setdefault(frame.entry, set()).update(states)
            states = ()
        obs.states.update(states)
        obs.roots.add(frame.stack[0])
        return obs

    def widen(self, states: set[State]) -> set[State]:
        out = widen(states, amp_switch, self._relevant_keys, self._guarding_key, self._max_states)
        if out is not states:
            self.widened += 1
        return out

    #: the states kept per program point in the root followed now (:func:`state_cap`)
    _max_states = MAX_STATES

    #: how many widenings merged states so far (what a path leads to depends on its company)
    widened = 0

    def _guarding_key(self, key: str) -> bool:
        hit = self._guarding
        if hit is None:
            hit = self._guarding = self.guarding_conditions()
        return key in hit

    _guarding: set[str] | None = None

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
                if st is cst.Expr and frame.yield_to is not None and type(small.value) is cst.Yield:
                    cur = self.yield_point(frame, cur)
                    continue
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
            def header(cur: set[State]) -> set[State]:
                cur = self.items(frame, seqs.get(s, ()), cur)
                for wi in s.items:
                    if wi.asname is not None:
                        cur = self.rebind(frame, target_heads(wi.asname.name), cur)
                return cur
            return self.with_body(frame, s, _body(s.body), states, header)
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
            if kind == "exc":
                # an exception on its way out: what ``finally`` does then is no finding of its own
                incoming = {st if st.path.approx else st.with_path(approx=True) for st in incoming}
            f = self.block(frame, fin, incoming)
            getattr(result, kind).update(f.normal)
            result.merge(f, normal=False)
        return result


def _obs_key(obs: Observation) -> tuple:
    return (obs.kind, obs.node, obs.scaler, obs.opt, tuple(id(r) for r in obs.regions))
