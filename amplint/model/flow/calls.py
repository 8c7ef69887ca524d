"""Events as transitions: what each classified call (:mod:`..events`) does to the states.

The GradScaler transitions follow its own per-optimizer state machine (READY -> UNSCALED ->
STEPPED -> ``update()`` -> READY) and what happens to the gradients (scaled by a scaled
backward; unscaled by ``unscale_``; consumed by ``step``; wiped by ``zero_grad``). A call of
unknown code that can reach a scaler (as an argument, or through its receiver) forgets that
scaler; a scaler call on a path where the scaler is disabled (``enabled=<flag>`` with the flag
false) does nothing.
"""

from __future__ import annotations

import libcst as cst

from ... import torch_api as T
from ..events import CASTS, steps_through_receiver
from ..structure import CallSite
from ..syntax import expr_key
from .interproc import target_heads
from .monitors import announce
from . import moves
from .state import CLEAN, FRESH, IMPLIED, LOST, SCALED, UNSCALED_GRADS, State

#: the most names bound to ``S.scale(...)`` one path follows (see :meth:`Calls.assign`)
MAX_SCALED_NAMES = 16
#: more scalers on one path than any training script holds (generated code): the ones beyond
#: are not followed, and the path is approximate (each new scaler would copy the state)
MAX_SCALERS = 64
_HARMLESS_BASES = frozenset({"", "object", "ABC", "abc.ABC", "Generic", "Protocol", "nn.Module", "torch.nn.Module", "Module"})


class Calls:
    """Mixin of :class:`~.interpret.Flow`: calls and assignments."""

    def _init_calls(self) -> None:
        self.events = self.m.events
        self._move_memo: dict = {}

    def call(self, frame, cs: CallSite, states: set[State]) -> set[State]:
        out = self._call(frame, cs, states)
        last = (cs.text or "").rsplit(".", 1)[-1]
        if last != "backward" and T.BACKWARD_LIKE.match(last):
            # ``self.manual_backward(loss)``, ``engine.backward_step(loss)``: may produce gradients
            out = {announce(st, "backward", node=cs.node) for st in out}
        return out

    def _call(self, frame, cs: CallSite, states: set[State]) -> set[State]:
        ev = self.events.of(cs)
        kind = ev.kind
        if ev.param_recv and kind != "scaler" and frame.scaler_params and cs.recv is not None \
                and self.is_scaler(frame, cs.recv) and cs.method is not None:
            kind = "scaler"  # a parameter the caller bound to a scaler
        if kind == "scaler":
            return self.scaler_call(frame, cs, self.canon(frame, cs.recv) or cs.recv, states)
        if kind == "backward" and cs.method == "backward" and steps_through_receiver(cs):
            if self.resolve(frame, cs) is not None:
                kind = "call"  # ``self.amp.backward(loss)`` on an object of a project class (another module's)
        if kind == "backward":
            return self.backward(frame, cs, ev.tensor, states)
        if kind == "clip":
            self.observe(frame, "clip", cs.node, cs, None, None, states)
            # (through a plain helper: the helper's call is the clip the path made)
            node = frame.entry.node if frame.entry is not None else cs.node
            return {announce(st, "clip", node=node, implied=[k for k, f in st.scalers
                                                               if f.grads is not None and f.grads[0] == IMPLIED])
                    for st in states}
        if kind == "zero_grad":
            rkey = self.canon(frame, cs.recv)
            self.observe(frame, "zero_grad", cs.node, cs, None, rkey, states)
            return {self._zero_grad(st, cs.node, rkey) for st in states}
        if kind == "opt_step" and (self.resolve(frame, cs) is not None or self.passes_scaler(frame, cs)):
            # an optimizer wrapper of this file: its ``step`` is interpreted; a wrapper handed the
            # scaler (``optimizer.step("generator", scaler=scaler)``; a torch optimizer's step
            # takes a closure only) steps through it: unknown code that has the scaler. Either way
            # it steps an optimizer: the plain backwards before it fed this step, not a later one
            out = self._resolved_call(frame, cs, states)
            return {st.with_path(plain=frozenset()) if st.path.plain else st for st in out}
        if kind == "opt_step":
            o = self.canon(frame, cs.recv) or cs.recv
            self.observe(frame, "opt_step", cs.node, cs, None, o, states)
            out = set()
            for st in states:
                scaled = [k for k, f in st.scalers if f.grads is not None and f.grads[0] == SCALED]
                st = st.with_path(plain=frozenset()) if st.path.plain else st
                out.add(announce(st, "opt_step", node=cs.node, scaled=scaled) if scaled else st)
            return out
        if kind in ("torch", "pure", "create"):
            return states
        return self._resolved_call(frame, cs, states)

    def _resolved_call(self, frame, cs: CallSite, states: set[State]) -> set[State]:
        classes = self.dispatch_classes(frame.func, cs)
        if len(classes) > 1:
            return self.dispatch(frame, cs, cs.recv, cs.method, classes, states)
        callee = self.resolve(frame, cs)
        if callee is not None:
            fn, self_key, self_cls = callee
            if self.transparent(fn) and not self.passes_scaler(frame, cs):
                return self.skip_transparent(frame, fn, self_key, states)
            return self.inline(frame, cs, fn, self_key, states, self_cls)
        hook = self.hook_call(frame, cs)
        if hook is not None:
            classes = self.hook_classes(hook[1])
            if classes:
                return self.dispatch(frame, cs, hook[0], hook[1], classes, states)
        return self.unknown_call(frame, cs, states)

    # --- the scaler --------------------------------------------------------------------------

    def scaler_call(self, frame, cs: CallSite, s: str, states: set[State]) -> set[State]:
        m = cs.method
        states = self.assume_scaler(frame, s, states, cs.recv)
        if not states:
            return states
        live = {st for st in states if not self.disabled(frame, cs.recv, st)}
        idle = states - live
        if idle and m == "step":
            idle = {st.with_path(plain=frozenset()) if st.path.plain else st for st in idle}
        if not live:
            return idle
        if m == "scale":
            self.observe(frame, "scale", cs.node, cs, s, None, live)
            return live | idle
        if m == "unscale_":
            o = self.opt_key(frame, cs)
            self.observe(frame, "unscale", cs.node, cs, s, o, live)
            return self._moved(live, (m, s, o, cs.node), moves.unscale) | idle
        if m == "step":
            o = self.opt_key(frame, cs)
            self.observe(frame, "step", cs.node, cs, s, o, live)
            return self._moved(live, (m, s, o, cs.node), moves.step) | idle
        if m == "update":
            self.observe(frame, "update", cs.node, cs, s, None, live)
            return self._moved(live, (m, s, None, cs.node), moves.update) | idle
        if m in T.SCALER_QUERIES:
            return live | idle
        # any other method (private helpers, monkey-patched ones) may change the scaler
        return {self.forget(st, s) for st in live} | idle

    def dispatch(self, frame, cs: CallSite, recv: str, method: str, classes: list, states: set[State]) -> set[State]:
        """A receiver holding objects of several known classes (the hooks of a list, ``trainer =
        (A if cfg.a else B)(...)``): each path runs one class's method, and which class is a
        condition of the path (``type(trainer) is A``), so a later call on the same receiver
        takes the same class; rebinding the receiver (the next hook of the list) forgets it."""
        key = self.canon(frame, recv) or recv
        atoms = [f"type({key}) is {cls.name}#{i}" for i, cls in enumerate(classes)]
        self._relevant_keys.update(atoms)
        out: set[State] = set()
        # a loop over the objects (``for h in self.hooks: h.after_iter(self)``) runs every one:
        # a path on which only those that leave the scaler alone ran is speculative
        each = cs.loops and isinstance(cs.loops[-1], cst.For) and recv in target_heads(cs.loops[-1].target)
        touching = [c for c in classes if self._touches(self.m.scopes.method(c, method))] if each else []
        for i, cls in enumerate(classes):
            mine = set()
            facts = frozenset((a, j == i) for j, a in enumerate(atoms))
            ran = None
            if each and frame.depth and cls in touching:
                # the list holds one object of a class whose hook meets the scaler: one pass of
                # this call's loop runs it (the fact goes when the callee returns)
                ran = (f"{frame.tag}ran#{cs.order}:{cls.name}", True)
                self._relevant_keys.add(ran[0])
                facts = facts | {ran}
            for st in states:
                p = st.path
                if ran in p.assume or any((a, not v) in p.assume for a, v in facts):
                    continue
                new = facts - p.assume
                if new:
                    approx = p.approx or bool(p.dropped and any(a in p.dropped for a, _v in new))
                    st = st.with_path(assume=p.assume | new, approx=approx)
                mine.add(st)
            if mine:
                got = self.inline(frame, cs, self.m.scopes.method(cls, method), recv, mine, cls)
                if touching and cls not in touching:
                    got = {st if st.path.approx else st.with_path(approx=True) for st in got}
                out |= got
        return out

    def _moved(self, states: set[State], move: tuple, fn) -> set[State]:
        """``fn(state, *move)`` for each state; a transition is a pure function of the state and
        the move, so a loop's later passes look up the states they have already moved."""
        memo = self._move_memo.get(move)
        if memo is None:
            memo = self._move_memo[move] = {}
        args = move[1:]
        out = set()
        for st in states:
            new = memo.get(st)
            if new is None:
                new = memo[st] = fn(st, *args)
            out.add(new)
        return out

    def forget(self, st: State, s: str) -> State:
        if _saturated(st, s):
            return st.with_path(approx=True)
        return announce(st.with_facts(s, LOST), "forget", scaler=s)

    def backward(self, frame, cs: CallSite, tensor, states: set[State]) -> set[State]:
        # an evaluation region of a caller (``def test_trains(): exp.run()``, a pytest function
        # by its name) whose calls run a backward is training code after all
        for r in frame.ctx_regions:
            if r.kind in ("eval", "eval_name") and not r.has_backward:
                r.has_backward = True
        if isinstance(tensor, cst.IfExp):
            # ``(scaler.scale(loss) if scaler is not None else loss).backward()``: each arm on the
            # paths its test selects
            return (self.backward(frame, cs, tensor.body, self.assume(frame, tensor.test, True, states))
                    | self.backward(frame, cs, tensor.orelse, self.assume(frame, tensor.test, False, states)))
        s = self.scaled_source(frame, tensor)
        if s is not None:
            recv = _scale_receiver(tensor)
            states = self.assume_scaler(frame, s, states, recv)
            live = {st for st in states if not self.disabled(frame, recv, st)}
            plain = states - live
            self.observe(frame, "scaled_backward", cs.node, cs, s, None, live)
            out = {self._scaled_backward(st, s, cs.node) for st in live}
            if plain:
                self.observe(frame, "backward", cs.node, cs, None, None, plain)
                out |= {announce(st.with_path(plain=st.path.plain | {cs.node}), "backward", node=cs.node) for st in plain}
            return out
        name = expr_key(tensor) if tensor is not None else None
        key = (self.canon(frame, name) or name) if name is not None else None
        out = set()
        plain = []
        for st in states:
            src = next((sc for n, sc in st.path.scaled if n == key), None) if key is not None else None
            if src is not None:
                self.observe(frame, "scaled_backward", cs.node, cs, src, None, {st})
                out.add(self._scaled_backward(st, src, cs.node))
            else:
                plain.append(st)
        if plain:
            self.observe(frame, "backward", cs.node, cs, None, None, plain)
            out.update(announce(st.with_path(plain=st.path.plain | {cs.node}), "backward", node=cs.node) for st in plain)
        return out

    def _scaled_backward(self, st: State, s: str, node) -> State:
        f = st.facts(s)
        st = st.with_facts(s, f.but(grads=(SCALED, node), sbw=f.sbw | {node}))
        return announce(st, "scaled_backward", scaler=s, node=node)

    def _zero_grad(self, st: State, node, rkey) -> State:
        dirty = [k for k, f in st.scalers if f.grads is not None and f.grads[0] in (SCALED, UNSCALED_GRADS)]
        st = announce(st, "zero_grad", node=node, recv=rkey, dirty=dirty)
        st = st.map_scalers(lambda _k, f: f.but(grads=(CLEAN, None) if f.grads is not None else None, sbw=frozenset(),
                                                exact=True))
        return st.with_path(plain=frozenset()) if st.path.plain else st

    def scaled_source(self, frame, tensor) -> str | None:
        """The scaler whose ``scale(...)`` produced ``tensor`` syntactically, if any."""
        if tensor is None:
            return None
        if isinstance(tensor, cst.Call) and isinstance(tensor.func, cst.Attribute) and tensor.func.attr.value == "scale":
            recv = expr_key(tensor.func.value)
            if self.is_scaler(frame, recv):
                return self.canon(frame, recv)
        if isinstance(tensor, cst.BinaryOperation):
            return self.scaled_source(frame, tensor.left) or self.scaled_source(frame, tensor.right)
        if (isinstance(tensor, cst.Call) and len(tensor.args) == 2
                and self.m.imports_of(frame.func).qualify(tensor.func) in CASTS):
            return self.scaled_source(frame, tensor.args[1].value)  # ``cast(Tensor, scaler.scale(loss))``
        return None

    # --- unknown code --------------------------------------------------------------------------

    def unknown_call(self, frame, cs: CallSite, states: set[State]) -> set[State]:
        """Unknown code that can reach a scaler (an argument, or its owner) may do anything to it."""
        reach: list[str] = []
        for a in cs.node.args:
            key = expr_key(a.value)
            if key is not None:
                reach.append(self.canon(frame, key) or key)
                if key == "self":
                    # the object's scalers under the names its caller gave them (``trainer =
                    # T(model, opt, scaler)`` inlined: ``self.scaler`` is the caller's ``scaler``)
                    reach.extend(c for c in (self.canon(frame, f"self.{n}") for n in self._names_of_scalers())
                                 if c is not None and not c.startswith("self."))
        recv = cs.recv
        if recv is not None and self.recv_may_touch(frame, cs) and not self._value_used(cs):
            reach.append(self.canon(frame, recv) or recv)
        if not reach:
            return states
        out = set()
        for st in states:
            for s in st.keys():
                if any(s == r or s.startswith(r + ".") for r in reach):
                    st = self.forget(st, s)
            out.add(st)
        return out

    @staticmethod
    def _value_used(cs: CallSite) -> bool:
        """The call's result is bound, tested or computed with (``logp, v = agent.evaluate(obs)``,
        ``agent.net(x).sum()``): a query of the object, not a procedure that would run its
        scaler's protocol for the caller (a bare ``agent.after_step()`` may)."""
        stmt = cs.stmt
        return not (isinstance(stmt, cst.SimpleStatementLine)
                    and any(isinstance(b, cst.Expr) and b.value is cs.node for b in stmt.body))

    def recv_may_touch(self, frame, cs: CallSite) -> bool:
        """``obj.method()`` may change ``obj.scaler``; ``self.foo()`` only when ``foo`` may be an
        inherited method of code outside the file."""
        if cs.recv != "self":
            return True
        cls = self.owner(frame.func)
        if cls is None:
            return True
        if (cs.method or "") in self.m.self_attrs.get(cls, ()):
            return False  # ``self.model(x)``: an attribute, not a method
        for c in self.m.scopes.mro(cls):
            if any(b not in _HARMLESS_BASES and not self.m.scopes.classes_named(b, c) for b in c.bases):
                return True
        return False

    # --- assignments ---------------------------------------------------------------------------

    def _same_scaler(self, frame, value, ckey: str) -> bool:
        vkey = expr_key(value) if isinstance(value, (cst.Name, cst.Attribute)) else None
        return vkey is not None and (self.canon(frame, vkey) or vkey) == ckey

    def assign(self, frame, small: cst.CSTNode, states: set[State]) -> set[State]:
        if isinstance(small, cst.Assign):
            targets = [t.target for t in small.targets]
        else:  # AnnAssign, AugAssign, NamedExpr
            targets = [small.target]  # type: ignore[attr-defined]
        value = getattr(small, "value", None)
        from .interproc import target_heads

        if len(targets) == 1 and isinstance(targets[0], cst.Name) and not isinstance(small, cst.AugAssign):
            key = targets[0].value
            if self.is_scaler(frame, key) and self._same_scaler(frame, value, self.canon(frame, key) or key):
                return states  # ``scaler = c.scaler``: the local stands for the attribute (an alias)
        heads: set[str] = set()
        for t in targets:
            heads |= target_heads(t)
        cur = self.rebind(frame, heads, states, keep_scaled=isinstance(small, cst.AugAssign))
        if isinstance(small, cst.AugAssign):
            return cur
        scaled_by = self.scaled_source(frame, value) if isinstance(value, cst.Call) else None
        built = self.built_class(frame, value)
        for t in targets:
            key = expr_key(t)
            if key is None:
                if isinstance(t, cst.Tuple) and isinstance(value, cst.Tuple) and len(t.elements) == len(value.elements):
                    for et, ev in zip(t.elements, value.elements):  # ``parts, loss = 1, None``
                        if isinstance(et.value, cst.Name):
                            cur = self.set_flag(frame, et.value.value, ev.value, cur)
                continue
            ckey = self.canon(frame, key) or key
            if built is not None:
                self.note_constructor_aliases(frame, ckey, built, value)
            if scaled_by is not None and isinstance(t, cst.Name):
                # (a path holding more scaled names than any training step does, thousands of
                # ``y_i = scaler.scale(x_i)``, is not followed name by name: each would copy the
                # set again; it is kept as approximate, so no rule concludes from it)
                cur = {st.with_path(scaled=st.path.scaled | {(ckey, scaled_by)}) if len(st.path.scaled) < MAX_SCALED_NAMES
                       else st.with_path(approx=True) for st in cur}
            if isinstance(t, cst.Name) and len(targets) == 1:
                cur = self.set_flag(frame, key, value, cur)
            if self.is_scaler(frame, key):
                ctor = self.scalers.ctor_in(value)
                if ctor is not None:
                    self.created(frame, ckey, ctor, cur)
                    depth = self._loop_depth
                    cur = {st.with_path(approx=True) if _saturated(st, ckey)
                           else announce(self.forget(st, ckey).with_facts(ckey, FRESH), "create", scaler=ckey, node=ctor,
                                         depth=depth) for st in cur}
                elif ckey in self.elements:
                    cur = {self.take_element(st, ckey) for st in cur}
                elif not (isinstance(value, cst.Name) and value.value == "None"):
                    cur = {self.forget(st, ckey) for st in cur}
        return cur


def _saturated(st: State, s: str) -> bool:
    return len(st.scalers) >= MAX_SCALERS and not st.has(s)


def _scale_receiver(tensor) -> str | None:
    if isinstance(tensor, cst.Call) and isinstance(tensor.func, cst.Attribute) and tensor.func.attr.value == "scale":
        return expr_key(tensor.func.value)
    if isinstance(tensor, cst.BinaryOperation):
        return _scale_receiver(tensor.left) or _scale_receiver(tensor.right)
    if isinstance(tensor, cst.Call) and len(tensor.args) == 2:
        return _scale_receiver(tensor.args[1].value)
    return None
