"""Conditions about the scalers themselves (see :mod:`.conditions`): a scaler that exists only
when a flag is set is that flag, and one built with ``enabled=<flag>`` does nothing on a path
where the flag is false."""

from __future__ import annotations

import libcst as cst

from ..syntax import expr_key
from .state import State

_FLAG_VALUES = (cst.Name, cst.Attribute, cst.Comparison, cst.UnaryOperation, cst.BooleanOperation)


class ScalerConditions:
    """Mixin of :class:`~.conditions.Conditions`: presence and ``enabled=`` atoms of scalers."""

    def _is_enabled_call(self, frame, test):
        """``S.is_enabled()`` for a scaler built with ``enabled=<flag>``: the flag."""
        if (isinstance(test, cst.Call) and not test.args and isinstance(test.func, cst.Attribute)
                and test.func.attr.value == "is_enabled"):
            recv = expr_key(test.func.value)
            if recv is not None and self.is_scaler(frame, recv):
                return self._enabled_of.get(self._scaler_scope_key(frame.func, recv))
        return None

    def _scaler_scope_key(self, func, key: str) -> tuple:
        if key.startswith("self."):
            return (id(self._owner(func)), key)
        return (id(self.scalers.scopes.scope_of(func, key)), key)

    def _scaler_conditions(self) -> None:
        """Presence and ``enabled=`` atoms of every scaler binding (see the module doc)."""
        by_key: dict[tuple, list] = {}
        for b in self.m.bindings:
            if b.kind in ("assign", "ann") and not b.unpack and b.value is not None:
                by_key.setdefault(self._scaler_scope_key(b.func, b.name), []).append(b)
        for sk, bindings in by_key.items():
            func = bindings[0].func
            if not self.is_scaler_in(func, bindings[0].name):
                continue
            ctor_bindings = [b for b in bindings if self.scalers.ctor_in(b.value) is not None]
            others = [b for b in bindings if b not in ctor_bindings]
            if len(ctor_bindings) != 1 or any(not _is_none(b.value) for b in others):
                continue
            b = ctor_bindings[0]
            v = b.value
            ctor = self.scalers.ctor_in(v)
            enabled = _keyword(ctor, "enabled")
            if enabled is not None and isinstance(enabled, _FLAG_VALUES) and not isinstance(enabled, cst.Name) \
                    or isinstance(enabled, cst.Name) and enabled.value not in ("True", "False"):
                self._enabled_of[sk] = (enabled, b.func)
            if isinstance(v, cst.IfExp) and (_is_none(v.orelse) or _is_none(v.body)):
                self._presence[sk] = (v.test, b.func, not _is_none(v.body))
            elif isinstance(v, cst.BooleanOperation) and isinstance(v.operator, cst.And) and v.right is ctor:
                self._presence[sk] = (v.left, b.func, True)
            elif others and b.arms and v is ctor:
                owner, test, arm = b.arms[-1]
                if isinstance(owner, cst.If) and arm in (0, 1) and all(not o.arms or o.arms[:-1] == b.arms[:-1]
                                                                     for o in others):
                    self._presence[sk] = (test, b.func, arm == 0)

    def _is_plain_enabled_test(self, frame, test) -> bool:
        """``S.is_enabled()`` (or its negation's operand) of a scaler with no ``enabled=`` flag."""
        node = test.expression if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not) else test
        if not (isinstance(node, cst.Call) and not node.args and isinstance(node.func, cst.Attribute)
                and node.func.attr.value == "is_enabled"):
            return False
        recv = expr_key(node.func.value)
        if recv is None or not self.is_scaler(frame, recv):
            return False
        return node is test

    def assume_scaler(self, frame, s: str, states: set[State], recv: str | None = None) -> set[State]:
        """A scaler method ran: the scaler exists on this path (and the condition it exists
        under holds). ``recv``: the receiver as written in ``frame``'s function."""
        self._relevant_keys.add(s)
        facts = [(s, True)]
        alias = self._presence.get(self._scaler_scope_key(frame.func, recv)) if recv is not None else None
        if alias is not None:
            node, func, polarity = alias
            if type(node) is cst.Comparison and self.static_test(func, node) not in (None, polarity):
                return set()  # ``GradScaler() if amp_dtype is torch.float16 else None``: never built
            facts = self.cond_facts(self._frame_for(frame, func), node, polarity) or facts
        out = set()
        for st in states:
            assume = st.path.assume
            if any((k, not v) in assume for k, v in facts):
                continue
            add = [(k, v) for k, v in facts if (k, v) not in assume]
            out.add(st.with_path(assume=assume | frozenset(add)) if add else st)
        return out

    def has_enabled_flag(self, func, recv_node) -> bool:
        """The scaler a call's receiver holds may be built with ``enabled=<expression>`` (or is
        unknown): only a constructor without one (or with a literal true) is always on."""
        vals = [v for v in self.m.values.of(func, recv_node) if v.kind == "scaler"] if recv_node is not None else []
        return not vals or any(v.enabled is not True for v in vals)

    def disabled(self, frame, recv: str | None, st: State) -> bool:
        """On this path the scaler ``recv`` (as written in ``frame``'s function) was built with
        ``enabled=<flag>`` and the flag is false."""
        if recv is None or not self._enabled_of:
            return False
        hit = self._enabled_of.get(self._scaler_scope_key(frame.func, recv))
        if hit is None:
            return False
        node, func = hit
        facts = self.cond_facts(self._frame_for(frame, func), node, True)
        return bool(facts) and all((k, not v) in st.path.assume for k, v in facts)


def _is_none(node) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


def _keyword(call, name: str):
    for a in call.args:
        if a.keyword is not None and a.keyword.value == name:
            return a.value
    return None
