"""Loops: iterated to a post-fixpoint, with the facts that change at an iteration boundary.

A ``for``/``while`` head is iterated until it no longer changes: the first passes restart from
the entry and keep every path apart, later ones accumulate and prune states another covers
(:func:`.state.prune`), which climbs a finite lattice; a loop that still changes after
:data:`MAX_LOOP_PASSES` is recorded as unconverged and no rule concludes from what ran in it.
A loop whose every pass steps another optimizer (``for opt in optimizers``, ``for name in opts:
opt = opts[name]``) is one training iteration; any other loop starts a new one per pass.

A loop variable that holds another scaler of one container each pass is one scaler per pass
(:mod:`.elements`).
"""

from __future__ import annotations

import libcst as cst

from ..syntax import expr_key, literal_value
from .atoms import mentions_any
from .elements import (
    Elements,
    element_leave,
    element_take,
    elements_begin,
    elements_end,
    is_elements,
    mentions,
)
from .frames import Frame, Outs, OverBudget
from .interproc import target_heads
from .monitors import announce
from .state import SCALED, State, prune

MAX_LOOP_PASSES = 8
#: passes after which a loop head accumulates instead of restarting from the entry
WIDEN_AFTER = 3
#: loops nested deeper than this (inlined calls included) make a function too complex to follow:
#: each level multiplies the passes of those inside it (the public corpus nests at most 5 deep)
MAX_LOOP_DEPTH = 8


def _body(node: cst.CSTNode) -> list[cst.CSTNode]:
    if isinstance(node, cst.IndentedBlock):
        return list(node.body)
    if isinstance(node, cst.SimpleStatementSuite):
        return [node]
    return []


class Loops(Elements):
    """Mixin of :class:`~.interpret.Flow`."""

    # --- loops -------------------------------------------------------------------------------

    def loop(self, frame: Frame, s: cst.For | cst.While, states: set[State]) -> Outs:
        key = (frame, s, tuple(sorted(frame.env.items())), frozenset(states))
        hit = self._loop_memo.get(key)
        if hit is None:
            if self._loop_depth >= MAX_LOOP_DEPTH:
                raise OverBudget
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
        # keys name the loop variables raw inside subscripts (``main#1.opts[idx]``)
        canon_variant = frozenset(self.canon(frame, t) or t for t in variant) | variant
        elements = self.element_scalers(frame, s, variant) if variant else {}
        if elements:
            cur = {elements_begin(st, elements) for st in cur}
        # a loop that runs no protocol step (``for p in d_model.parameters(): p.requires_grad =
        # True``) is part of the iteration around it, not a training loop of its own
        inner = not per_opt and not self.runs_protocol(s)
        entry = cur if per_opt or inner else {self.new_iteration(st) for st in cur}
        if not per_opt and self.steps_without_backward(s):
            entry = {_stale(st) for st in entry}
        head = entry
        out = Outs()
        outer_elements = self.elements
        self.elements = {**outer_elements, **elements}
        try:
            return self._passes(frame, s, entry, head, out, elements, targets, infinite, per_opt, inner,
                                canon_variant, canon_assigned)
        finally:
            self.elements = outer_elements

    def _passes(self, frame, s, entry, head, out, elements, targets, infinite, per_opt, inner, canon_variant,
                canon_assigned) -> Outs:
        body = _body(s.body)
        carried: set[State] = set()
        iterated: set[State] = set()
        passed: set[State] = set()  # (elements: every pass's back edge)
        converged = False
        worked, untouched = False, None  # per_opt: a pass got through the body; the entry's facts
        # paths are followed one by one, so a pass runs each statement of the body only on the
        # states no earlier pass brought to it: what they led to is already in ``out``/``back_all``
        seen: dict[cst.CSTNode, set[State]] = {}
        back_all: set[State] = set()
        for n in range(MAX_LOOP_PASSES):
            body_in = head
            if isinstance(s, cst.For):
                body_in = self.rebind(frame, targets, body_in)
                if elements:
                    body_in = {element_take(st, elements) for st in body_in}
            elif not infinite:
                body_in = self.assume(frame, s.test, True, body_in)
            o = self._fresh_block(frame, body, body_in, seen)
            out.merge(o, normal=False)
            raw = o.normal | o.cont
            if elements:
                raw = {element_leave(st, elements) for st in raw}
            back = {self.drop_target_stages(st, canon_variant) for st in raw}
            if back:
                self.observe(frame, "backedge", s, None, None, None, back, regions=frame.ctx_regions)
                self.per_iteration_creates(frame, back, s)
            if per_opt:
                # ``for opt in optimizers: if i != idx: continue; scaler.unscale_(opt)``, ``for name,
                # opt in opts.items(): if name == "sparse": opt.step() else: scaler.step(opt)``: that
                # every pass takes the arm that leaves the scaler alone is not what anyone means
                # (the arms name the elements there are); the path is kept, but as speculative
                if untouched is None:
                    untouched = {frozenset(b.scalers) for b in entry | self.rebind(frame, targets, entry)}
                worked = worked or any(frozenset(st.scalers) not in untouched for st in raw)
                if worked:
                    raw = {st.with_path(approx=True) if frozenset(st.scalers) in untouched else st for st in raw}
                back = {self.next_optimizer(st, canon_variant, canon_assigned) for st in raw}
                carried |= back
            elif inner:
                back = {self.next_iteration(st, canon_assigned, keep=True) for st in back}
                if self.hands_scaler_over(frame, s):
                    iterated |= back  # (so that the path skipping it is speculative, below)
            else:
                back = {self.next_iteration(st, canon_assigned) for st in back}
                iterated |= back
            if elements:
                passed |= back
            back_all |= back
            # the first passes restart from the entry (precise, path by path); later ones
            # accumulate and drop the states another one covers, which climbs the (finite)
            # lattice and so converges
            if n + 1 < WIDEN_AFTER:
                new_head = self.widen(entry | back_all)
            else:
                joined = head | back_all
                pruned = prune(joined)
                if len(pruned) != len(joined):
                    self.widened += 1
                new_head = self.widen(pruned)
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
                # a training loop that never runs once (an empty loader) is not what anyone means,
                # nor a loop handing the scaler to code amplint cannot see (``for h in
                # self.hooks: h.after_iter(self)``) over no element: the path that skips it is
                # kept, but as speculative
                exits = self.widen({st.with_path(approx=True) if st in entry and st not in iterated else st
                                    for st in exits})
            if per_opt and carried:
                exits = self.widen(carried)  # at least one optimizer was stepped
            elif elements and passed:
                exits = self.widen(passed)  # a container of scalers is not empty
        ret = out.ret if per_opt or inner else {self.new_iteration(st) for st in out.ret}
        result = Outs(ret=ret, exc=out.exc)
        if s.orelse is not None and exits:
            result.merge(self.block(frame, _body(s.orelse.body), exits))
        else:
            result.normal |= exits
        # ``break`` (and ``return`` above) leave the loop mid-iteration: what that iteration
        # stepped is not the enclosing iteration's
        result.normal |= out.brk if per_opt or inner else {self.new_iteration(st) for st in out.brk}
        if elements:
            for part in ("normal", "ret", "exc"):
                setattr(result, part, {elements_end(st, elements) for st in getattr(result, part)})
        result.normal = self.widen(result.normal)
        return result

    def _fresh_block(self, frame: Frame, stmts: list[cst.CSTNode], states: set[State],
                     seen: dict[cst.CSTNode, set[State]]) -> Outs:
        """:meth:`~.interpret.Flow.block` on the states no earlier pass brought to each statement.

        Paths are followed one by one, so what a state an earlier pass brought to a statement led
        to from there is already in that pass's outcome, unless a widening on the way merged it
        with the states it travelled with (it depends on the whole set): a statement remembers
        its states only when nothing after it in the pass widened."""
        out = Outs()
        cur = states
        ran: list[tuple[cst.CSTNode, set[State], int]] = []
        for stmt in stmts:
            done = seen.get(stmt)
            if done:
                cur = cur - done
            if not cur:
                break
            ran.append((stmt, cur, self.widened))
            o = self.stmt(frame, stmt, cur)
            out.merge(o, normal=False)
            cur = o.normal
        out.normal = cur
        for stmt, came, widened in reversed(ran):
            if widened != self.widened:
                break
            seen.setdefault(stmt, set()).update(came)
        return out

    def loop_bindings(self, s: cst.CSTNode) -> list:
        """The bindings inside loop ``s`` (in the model's order), from an index built once and
        extended as modules are admitted: a scan of the file's bindings per loop made a file of
        many small loops quadratic."""
        return self._loops_indexed()[0].get(id(s), [])

    def loop_calls(self, s: cst.CSTNode) -> list:
        """The call sites inside loop ``s``, in the model's order."""
        return self._loops_indexed()[1].get(id(s), [])

    def _loops_indexed(self) -> tuple[dict, dict]:
        """The index, extended by what the project modules admitted since it was built bring
        (a loop of another module's method, inlined: ``opt = self.optimizers[name]`` in it)."""
        idx = self._loop_index
        bindings, calls = self.m.bindings, self.m.calls
        if idx is None:
            idx = self._loop_index = ({}, {}, [0, 0])
        done = idx[2]
        if done[0] != len(bindings) or done[1] != len(calls):
            _index_by_loop(bindings[done[0]:], idx[0])
            _index_by_loop(calls[done[1]:], idx[1])
            done[0], done[1] = len(bindings), len(calls)
        return idx[0], idx[1]

    _loop_index: tuple[dict, dict, list] | None = None

    def loop_assigned(self, s: cst.CSTNode) -> frozenset[str]:
        hit = self._assigned_in.get(s)
        if hit is None:
            names = {b.name for b in self.loop_bindings(s) if b.kind != "item"}
            hit = self._assigned_in[s] = frozenset(names)
        return hit

    def loop_variant(self, frame: Frame, s: cst.For, targets: frozenset[str]) -> frozenset[str]:
        """The loop's targets, and the names its body binds from them (``opt = opts[name]``)."""
        out = set(targets)
        changed = True
        while changed:
            changed = False
            for b in self.loop_bindings(s):
                if b.func is frame.func and b.name not in out and b.kind in ("assign", "walrus") \
                        and b.value is not None and mentions(b.value, out):
                    out.add(b.name)
                    changed = True
        return frozenset(out)

    # --- iteration boundaries ------------------------------------------------------------------

    def steps_without_backward(self, s: cst.For | cst.While) -> bool:
        """A training loop of its own that steps an optimizer and runs no backward (nor code of
        the project that does) on any path."""
        hit = self._loop_backward.get(s)
        if hit is None:
            inside = self.loop_calls(s)
            hit = self._loop_backward[s] = any(
                self.events.of(c).kind == "opt_step" or c.method == "step" and self.events.of(c).kind == "scaler"
                for c in inside) and not any(
                self.events.of(c).kind == "backward" or self.m.has_backward_call(c) for c in inside)
        return hit

    def new_iteration(self, st: State) -> State:
        return st.map_scalers(lambda _k, f: f.but(iters=None) if f.iters is not None else f)

    def next_iteration(self, st: State, assigned: frozenset[str], keep: bool = False) -> State:
        """Back edge: conditions on the names the loop rebinds are forgotten; a training loop
        also starts a new iteration (``keep``: a loop inside one does not)."""
        p = st.path
        assume = frozenset(x for x in p.assume if not mentions_any(x[0], assigned))
        scaled = frozenset(x for x in p.scaled if x[0] not in assigned)
        dropped = self.undrop(p.dropped, assigned) if p.dropped else p.dropped
        if assume != p.assume or scaled != p.scaled or p.handled or dropped != p.dropped:
            st = st.with_path(assume=assume, scaled=scaled, handled=False, dropped=dropped)
        if keep:
            return st
        st = self.new_iteration(st)
        return announce(st, "next_iteration", depth=self._loop_depth)

    def hands_scaler_over(self, frame: Frame, s: cst.For | cst.While) -> bool:
        """A call in the loop that amplint cannot follow is handed a scaler or the object holding
        one (``h.after_train_iter(self)``): it may run the protocol."""
        hit = self._loop_hands.get(s)
        if hit is None:
            hit = False
            for c in self.loop_calls(s):
                if c.func is not frame.func or self.events.of(c).kind != "call" or self.resolve(frame, c) is not None:
                    continue
                keys = [expr_key(a.value) for a in c.node.args]
                if any(k == "self" or k is not None and self.is_scaler(frame, k) for k in keys):
                    hit = True
                    break
            self._loop_hands[s] = hit
        return hit

    def runs_protocol(self, s: cst.For | cst.While) -> bool:
        """Some path of the loop scales, steps, updates or back-propagates (itself or through the
        analysed code it calls): a training loop, whose passes are iterations."""
        hit = self._loop_protocol.get(s)
        if hit is None:
            hit = False
            for c in self.loop_calls(s):
                kind = self.events.of(c).kind
                callee = self.resolve(self.root_frame(c.func), c) if kind == "call" else None
                if kind in ("scaler", "backward", "opt_step", "create") or self.m.has_backward_call(c) or (
                        callee is not None and not self.transparent(callee[0])):
                    hit = True
                    break
            self._loop_protocol[s] = hit
        return hit

    def next_optimizer(self, st: State, targets: frozenset[str], assigned: frozenset[str]) -> State:
        """Back edge of a loop over optimizers: the next pass's optimizer starts READY; this
        pass's stage moves to ``done`` and its steps stay in the iteration under a renamed key."""
        def rename(o: str) -> str:
            return o + "*" if not o.endswith("*") and mentions_any(o, targets) else o

        def move(k, f):
            if is_elements(k):
                return f
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
        return st.map_scalers(lambda k, f: f.but(stages=frozenset(x for x in f.stages if not mentions_any(x[0], targets)))
                              if not is_elements(k) and any(mentions_any(x[0], targets) for x in f.stages) else f)


def _stale(st: State) -> State:
    """A training loop without a backward of its own (a second stage that only steps a fresh
    optimizer) meets scaled gradients only as what a partial accumulation window before it left:
    that path is kept, but as speculative."""
    if any(f.grads is not None and f.grads[0] == SCALED for _k, f in st.scalers):
        return st.with_path(approx=True)
    return st


def _index_by_loop(items, out: dict[int, list]) -> dict[int, list]:
    for x in items:
        for loop in x.loops:
            out.setdefault(id(loop), []).append(x)
    return out
