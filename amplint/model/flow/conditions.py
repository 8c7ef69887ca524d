"""Correlated conditions: which branch outcomes a path remembers, and what they mean.

A branch on a condition adds ``(key, outcome)`` to the path (``PathFacts.assume``); a later
branch on the same key takes only the arm that agrees, so ``if use_amp: <scaled backward> ...
if use_amp: <scaler.step>`` stay correlated and the plain ``loss.backward()`` of the ``else``
never meets the scaler's step. Keys are canonical *atoms*:

- a flag bound once to a condition is that condition (``use_amp = args.amp``:
  ``if use_amp`` and ``if args.amp`` are one atom), through attributes (``self.fp16 = cfg.fp16``);
- a scaler that exists only when a flag is set is that flag (``scaler = GradScaler() if amp
  else None``; ``scaler = None`` then ``if amp: scaler = GradScaler()``): ``if scaler``,
  ``if scaler is not None`` and ``if amp`` are one atom, and calling a method of the scaler
  assumes it;
- a scaler built with ``enabled=<flag>`` is enabled exactly when the flag is:
  ``scaler.is_enabled()`` is the flag, and on a path where the flag is false the scaler does
  nothing (its calls are not events).

Only atoms that can correlate two branches are remembered: those tested more than once, or
naming a scaler. Rebinding a name forgets the atoms that mention it.
"""

from __future__ import annotations

import libcst as cst

from ..names import dotted_text
from .atoms import amp_switch, compact, mentions_any
from .interest import Interest
from .scaler_conditions import _FLAG_VALUES, ScalerConditions
from .state import State

_MAX_ALIAS = 4


class Conditions(Interest, ScalerConditions):
    """Mixin of :class:`~.interpret.Flow`: condition atoms, ``assume`` and exclusive arms."""

    # --- atoms -------------------------------------------------------------------------------

    def _init_conditions(self) -> None:
        self._cond_text: dict[cst.CSTNode, str] = {}
        self._flag_memo: dict[tuple, object] = {}
        self._presence: dict[tuple, tuple] = {}
        self._enabled_of: dict[tuple, tuple] = {}
        self._relevant_keys: set[str] = set()
        self._undrop_cache: dict[tuple, frozenset] = {}
        self._mentions_memo: dict[tuple, bool] = {}
        self._assume_memo: dict[tuple, frozenset] = {}
        self._guard_memo: dict = {}
        self._static_memo: dict = {}
        self._scaler_conditions()
        self.interesting = self._interesting_conditions()
        self._object_flag_counts: dict[str, int] = {}
        self._object_flags(self.m)  # (counted: a module admitted later may test them again)

    def test_text(self, test: cst.CSTNode) -> str:
        text = self._cond_text.get(test)
        if text is None:
            text = self._cond_text[test] = compact(self.m.code_for(test))
        return text

    def cond_facts(self, frame, test: cst.BaseExpression, value: bool, raw: bool = False, depth: int = 0):
        """What a branch on ``test`` taking ``value`` tells: (atom, truth) pairs."""
        if isinstance(test, (cst.Name, cst.Attribute)):
            text = dotted_text(test)
            if text is not None:
                if text in ("True", "False", "None"):
                    return []
                alias = self._flag_alias(frame.func, text, depth) or self._param_alias(frame, text, depth)
                if alias is not None:
                    node, func, polarity = alias
                    out = self.cond_facts(self._frame_for(frame, func), node, value == polarity, raw, depth + 1)
                    if not raw and self.is_scaler(frame, text):
                        # the scaler's own presence too: a helper it is handed to tests
                        # ``if scaler is not None`` on its parameter, not on the flag
                        out = out + [(self.canon(frame, text) or text, value)]
                    return out
                if raw:
                    return [(text, value)]
                if text not in self.interesting and not self.is_scaler(frame, text):
                    return []
                return [(self.canon(frame, text) or text, value)]
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            return self.cond_facts(frame, test.expression, not value, raw, depth)
        if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
            op = test.comparisons[0].operator
            right = test.comparisons[0].comparator
            if isinstance(right, cst.Name) and right.value == "None" and isinstance(op, (cst.Is, cst.IsNot)):
                return self.cond_facts(frame, test.left, value if isinstance(op, cst.IsNot) else not value, raw, depth)
        if isinstance(test, cst.BooleanOperation):
            # the whole condition is an atom of its own (so the arm where it is false stays
            # correlated too), and the arm that fixes every operand also tells each of them
            text = self.test_text(test)
            if raw:
                return ([(text, value)] + self.cond_facts(frame, test.left, True, raw, depth)
                        + self.cond_facts(frame, test.right, True, raw, depth))
            whole = [(frame.tag + text if frame.tag else text, value)] if text in self.interesting else []
            if isinstance(test.operator, cst.And) and value:
                return whole + self.cond_facts(frame, test.left, True, False, depth) + self.cond_facts(frame, test.right, True, False, depth)
            if isinstance(test.operator, cst.Or) and not value:
                return whole + self.cond_facts(frame, test.left, False, False, depth) + self.cond_facts(frame, test.right, False, False, depth)
            return whole
        enabled = self._is_enabled_call(frame, test)
        if enabled is not None:
            node, func = enabled
            return self.cond_facts(self._frame_for(frame, func), node, value, raw, depth + 1)
        text = self.test_text(test)
        if raw:
            return [(text, value)]
        if text not in self.interesting:
            return []
        return [(frame.tag + text if frame.tag else text, value)]

    def _frame_for(self, frame, func):
        """The frame to read an expression of ``func`` in (a flag bound in another function:
        its atoms are not the caller's locals)."""
        if func is frame.func:
            return frame
        return self.root_frame(func)

    def _param_alias(self, frame, text: str, depth: int):
        """:meth:`_flag_alias` of what the root function handed to this parameter
        (``optim_step(loss, opt, scaler)`` after ``scaler = GradScaler() if amp else None``: the
        helper's ``if scaler is not None`` is ``amp``)."""
        if frame.depth != 1 or text not in frame.env or text not in frame.func.params:
            return None
        return self._flag_alias(frame.stack[0], frame.env[text], depth + 1)

    def _flag_alias(self, func, text: str, depth: int):
        """``(condition node, its function, polarity)`` when ``text`` is a flag bound exactly once
        to a condition, or a scaler that exists exactly when a condition holds."""
        if depth >= _MAX_ALIAS:
            return None
        key = (id(func), text)
        if key in self._flag_memo:
            return self._flag_memo[key]
        self._flag_memo[key] = None
        hit = self._presence.get(self._scaler_scope_key(func, text))
        if hit is None:
            bindings = [b for b in self.m.values.bindings_of_key(func, text) if b.kind != "item"]
            if len(bindings) == 1 and bindings[0].kind in ("assign", "ann") and not bindings[0].unpack:
                b = bindings[0]
                if isinstance(b.value, _FLAG_VALUES) and not self.is_scaler_in(b.func, text):
                    if not (isinstance(b.value, cst.Name) and b.value.value in ("True", "False", "None")):
                        hit = (b.value, b.func, True)
        self._flag_memo[key] = hit
        return hit

    def _owner(self, func):
        from ..scopes import owner_class

        return owner_class(func)

    def set_flag(self, frame, key: str, value, states: set[State]) -> set[State]:
        """``flag = True`` (``False``, ``None``): on this path, until it is rebound, a test of
        the flag takes the arm the literal selects."""
        truth = self.flag_truth(value) if key in self.interesting else None
        if truth is None or frame.func.is_module and self._constant(frame.func, key):
            # (a module constant, ``CLIP = False`` bound once at the top of a script, is a switch
            # its user flips: both arms of ``if CLIP:`` are configurations of the program)
            return states
        fact = (self.canon(frame, key) or key, truth)
        return {st.with_path(assume=st.path.assume | {fact}) for st in states}

    def _constant(self, func, key: str) -> bool:
        return "." not in key and sum(1 for b in self.m.values.bindings_of_key(func, key) if b.kind != "param") == 1

    def flag_truth(self, value) -> bool | None:
        """The truth a binding gives a flag: a ``True``/``False``/``None`` literal's, or true for
        the result of a call of an analysed function whose every return gives a value (``loss =
        forward_backward(...)`` after ``loss = None``, then ``if loss is None: continue``)."""
        truth = _literal_flag(value)
        if truth is not None or not isinstance(value, cst.Call):
            return truth
        site = self.m.call_of.get(value)
        callee = self.m.callee_of(site) if site is not None else None
        return True if callee is not None and _never_none(callee) else None

    def guarding_conditions(self) -> set[str]:
        """The atoms (tested more than once) of branches with scaler-flow events in their arms
        (``if FLAGS.torch:`` around the scaler's constructor and again around the training step):
        widening forgets them only after the other atoms that are not AMP switches. Forgetting
        one and branching on it again makes the path approximate, and the rules that need exact
        paths stop reading it; a long function with many unrelated branches would then have no
        exact path left to its training step."""
        out: set[str] = set()
        for test in self.m.tests:
            if self._guards_events(test):
                frame = self.root_frame(self._test_function(test))
                out.update(k for k, _v in self.cond_facts(frame, test, True, raw=True))
        return out & self.interesting

    def _test_function(self, test):
        hit = self.m.test_funcs.get(test)
        return hit if hit is not None else self.m.top

    # --- assume --------------------------------------------------------------------------------

    def assume(self, frame, test: cst.BaseExpression, value: bool, states: set[State]) -> set[State]:
        neg = type(test) is cst.UnaryOperation and type(test.operator) is cst.Not
        flag = test.expression if neg else test
        if type(flag) is cst.Name and frame.env.get(flag.value) in ("True", "False", "None"):
            # a flag the caller passes as a literal (``run_iteration(gen, False)`` with ``if
            # do_backprop:`` inside): only the arm it selects runs
            return states if (frame.env[flag.value] == "True") == (value != neg) else set()
        if type(test) is cst.Call and self._is_plain_enabled_test(frame, test):
            # the analysis follows an enabled scaler: the branch where it is disabled does not
            # exist for it
            return states if value else set()
        if type(test) is cst.Comparison and self.static_test(frame.func, test) not in (None, value):
            return set()  # ``if amp_dtype is torch.float16:`` where it is bfloat16 or None
        facts = self.cond_facts(frame, test, value)
        if not facts:
            return states
        operands = self._operand_facts(frame, test, value)
        relevant = self._guards_events(test)
        if relevant:
            self._relevant_keys.update(k for k, _v in facts)
        out = set()
        for st in states:
            assume = st.path.assume
            if operands and all(all(f in assume for f in part) for part in operands):
                continue  # ``else`` of ``a and b`` on a path that took ``a`` and ``b``
            ok = True
            add = []
            for k, v in facts:
                if (k, not v) in assume:
                    ok = False
                    break
                if (k, v) not in assume:
                    add.append((k, v))
            if not ok:
                continue
            if add:
                p = st.path
                approx = p.approx or bool(relevant and p.dropped and any(k in p.dropped for k, _v in add))
                st = st.with_path(assume=assume | frozenset(add), approx=approx)
            out.add(st)
        return out

    def static_test(self, func, test: cst.Comparison) -> bool | None:
        """:meth:`~amplint.model.values.Values.dtype_test`, once per test."""
        key = (id(func), test)
        if key not in self._static_memo:
            model = getattr(func, "owner_model", None) or self.m
            self._static_memo[key] = model.values.dtype_test(func, test)
        return self._static_memo[key]

    def _operand_facts(self, frame, test: cst.BaseExpression, value: bool) -> list | None:
        """For the arm of a boolean operation that fixes no operand (``a and b`` false, ``a or
        b`` true): each operand's facts in the outcome that would contradict the arm (``a``
        true, ``b`` true). A path that assumes all of them cannot take the arm. None when an
        operand tells nothing."""
        if type(test) is not cst.BooleanOperation or isinstance(test.operator, cst.And) != (not value):
            return None
        want = not value
        parts = []
        for operand in (test.left, test.right):
            facts = self.cond_facts(frame, operand, want)
            if not facts:
                return None
            parts.append(facts)
        return parts

    def rebind(self, frame, heads, states: set[State], keep_scaled: bool = False) -> set[State]:
        """Names rebound: forget the atoms that mention them (and names bound to a scaled loss)."""
        canon = frozenset(self.canon(frame, h) or h for h in heads)
        if not canon:
            return states
        memo = self._assume_memo
        out = set()
        for st in states:
            p = st.path
            assume = p.assume
            if assume:
                # states share their condition sets: each set is filtered once per rebinding
                hit = memo.get((assume, canon))
                if hit is None:
                    hit = memo[(assume, canon)] = self._forget(assume, canon)
                assume = hit
            scaled = p.scaled
            if scaled and not keep_scaled and any(x[0] in canon for x in scaled):
                scaled = frozenset(x for x in scaled if x[0] not in canon)
            dropped = self.undrop(p.dropped, canon) if p.dropped else p.dropped
            if assume != p.assume or scaled != p.scaled or dropped != p.dropped:
                st = st.with_path(assume=assume, scaled=scaled, dropped=dropped)
            out.add(st)
        return out

    def _forget(self, assume: frozenset, canon: frozenset) -> frozenset:
        memo = self._mentions_memo
        keep = []
        for x in assume:
            hit = memo.get((x[0], canon))
            if hit is None:
                hit = memo[(x[0], canon)] = mentions_any(x[0], canon)
            if not hit:
                keep.append(x)
        return assume if len(keep) == len(assume) else frozenset(keep)

    def undrop(self, dropped: frozenset, names) -> frozenset:
        key = (dropped, frozenset(names))
        hit = self._undrop_cache.get(key)
        if hit is None:
            hit = self._undrop_cache[key] = frozenset(k for k in dropped if not mentions_any(k, names))
        return hit

    # --- exclusive arms ------------------------------------------------------------------------

    def _guards_events(self, test: cst.BaseExpression) -> bool:
        """The branch on ``test`` has scaler-flow events in its arms: which arm runs changes facts."""
        hit = self._guard_memo.get(test)
        if hit is None:
            hit = self._guard_memo[test] = any(self.is_event_site(c) for c in self.m.guarded_calls.get(test, ()))
        return hit

    def alternatives(self, node: cst.CSTNode, amp_conditions: bool = False) -> frozenset:
        """Call nodes in the other arms of every ``if``/``elif``/``else``, conditional expression
        and ``match`` around the call ``node``: code that never runs in the same pass through
        those statements. With ``amp_conditions``, only branches whose condition reads like an
        AMP switch (``use_amp``, ``scaler is not None``, ``self.fp16``...)."""
        site = self.m.call_of.get(node)
        if site is None:
            return frozenset()
        out: set = set()
        for owner, test, i in site.arms:
            if amp_conditions and not amp_switch(self.test_text(test)):
                continue
            for j in range(self.m.arms_of.get(id(owner), 0)):
                if j != i:
                    out.update(self.m.arm_calls.get((id(owner), j), ()))
        return frozenset(out)

    def enclosing_tests(self, node: cst.CSTNode) -> list[str]:
        site = self.m.call_of.get(node)
        return [self.test_text(test) for _o, test, _i in site.arms] if site is not None else []


def _literal_flag(value) -> bool | None:
    """The truth of a ``True``/``False``/``None`` literal; None for anything else."""
    if isinstance(value, cst.Name) and value.value in ("True", "False", "None"):
        return value.value == "True"
    return None


def _never_none(func) -> bool:
    """Every way out of ``func`` returns a value that is not ``None`` (it ends in such a return)."""
    body = func.body
    last = body[-1] if body else None
    if not (isinstance(last, cst.SimpleStatementLine) and isinstance(last.body[-1], cst.Return)):
        return False
    from ..syntax import children

    stack = list(body)
    while stack:
        n = stack.pop()
        if isinstance(n, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        if isinstance(n, cst.Return) and (n.value is None or isinstance(n.value, cst.Name) and n.value.value == "None"):
            return False
        if isinstance(n, (cst.Yield, cst.Await)):
            return False
        stack.extend(children(n))
    return True
