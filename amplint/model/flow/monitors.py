"""Monitors: per-rule properties of a path, attached to the interpreter.

A monitor is a small automaton whose value rides along in every :class:`~.state.State`
(``state.mon[index]``). The interpreter announces protocol events (:data:`EVENTS`); each monitor
that subscribes to an event computes its next value. Adding a sequencing fact is adding a
monitor here: the state, the interpreter and the lattice do not change.

Every monitor value is a frozenset of tuples whose first element is a scaler key; ``join`` is
intersection (must) or union (may), as the monitor declares, and ``leq`` the matching order.
"""

from __future__ import annotations

from .state import register_monitors

#: events the interpreter announces, with their keyword arguments
EVENTS = {
    "scaled_backward": ("scaler", "node"),
    "backward": ("node",),  # a plain backward, or a call that may produce gradients
    "unscale": ("scaler", "opt", "node"),
    "step": ("scaler", "opt", "node"),
    "update": ("scaler", "node"),
    "zero_grad": ("node", "recv", "dirty"),  # dirty: scalers whose gradients were not clean
    "opt_step": ("node", "scaled"),  # scaled: scalers whose gradients were still scaled
    "create": ("scaler", "node", "depth"),
    "clip": ("node", "implied"),  # implied: scalers whose gradients are only assumed scaled
    "forget": ("scaler",),
    "next_iteration": ("depth",),
}


class Monitor:
    name = ""
    init: frozenset = frozenset()
    must = False  # join: intersection (True) or union (False)
    subscribes: tuple[str, ...] = ()

    def on(self, value: frozenset, event: str, **kw) -> frozenset:  # pragma: no cover - interface
        return value

    def join(self, a: frozenset, b: frozenset) -> frozenset:
        return a & b if self.must else a | b

    def leq(self, a: frozenset, b: frozenset) -> bool:
        return b <= a if self.must else a <= b


def _without(value: frozenset, scaler: str) -> frozenset:
    return frozenset(x for x in value if x[0] != scaler)


class ZeroedGradients(Monitor):
    """``zero_grad()`` calls that wiped the gradients of a scaled backward (scaled, or unscaled
    by ``unscale_``) before that scaler's step, with no backward since: ``(scaler, node,
    receiver key)``. Read by AMP012."""

    name = "zeroed"
    must = True
    subscribes = ("zero_grad", "scaled_backward", "backward", "step", "update", "forget")

    def on(self, value, event, **kw):
        if event == "zero_grad":
            return value | {(s, kw["node"], kw["recv"]) for s in kw["dirty"]}
        if event in ("scaled_backward", "backward"):
            return frozenset() if value else value
        return _without(value, kw["scaler"]) if value else value


class BypassedSteps(Monitor):
    """``optimizer.step()`` calls that consumed a scaler's still-scaled gradients since its last
    update: ``(scaler, node)``. Read by AMP006: the update after such a step raises, and the step
    (AMP003) is its cause."""

    name = "bypass"
    subscribes = ("opt_step", "update", "forget")

    def on(self, value, event, **kw):
        if event == "opt_step":
            return value | {(s, kw["node"]) for s in kw["scaled"]}
        return _without(value, kw["scaler"]) if value else value


class FreshScalers(Monitor):
    """Scalers built in the current iteration of the loop at a (dynamic) depth: ``(scaler,
    constructor node, depth, stepped)``, ``stepped`` once it stepped or updated since (also in
    a nested loop of that iteration). Read by AMP008 and AMP001 (a scaler rebuilt every
    iteration)."""

    name = "fresh"
    must = True
    subscribes = ("create", "next_iteration", "step", "update")

    def on(self, value, event, **kw):
        if event == "create":
            return _without(value, kw["scaler"]) | {(kw["scaler"], kw["node"], kw["depth"], False)}
        if event in ("step", "update"):
            s = kw["scaler"]
            if not value or not any(x[0] == s and not x[3] for x in value):
                return value
            return frozenset((x[0], x[1], x[2], True) if x[0] == s else x for x in value)
        depth = kw["depth"]
        return frozenset(x for x in value if x[2] < depth) if value else value


class ImpliedClips(Monitor):
    """Clips that ran while a scaler's gradients were only *assumed* scaled (the entry of a
    function that steps a scaler it was handed): ``(scaler, clip node)``. The assumption is
    confirmed when the same path reaches that scaler's ``step``/``unscale_``; read by AMP002
    there, so a clip on the path that never uses the scaler (``else: clip(); opt.step()``) is not
    reported."""

    name = "implied_clips"
    subscribes = ("clip", "scaled_backward", "update", "forget")

    def on(self, value, event, **kw):
        if event == "clip":
            return value | {(s, kw["node"]) for s in kw["implied"]} if kw["implied"] else value
        return _without(value, kw["scaler"]) if value else value


MONITORS = [ZeroedGradients(), BypassedSteps(), FreshScalers(), ImpliedClips()]
INDEX = {m.name: i for i, m in enumerate(MONITORS)}
_BY_EVENT: dict[str, list[tuple[int, Monitor]]] = {}
for _i, _m in enumerate(MONITORS):
    for _e in _m.subscribes:
        _BY_EVENT.setdefault(_e, []).append((_i, _m))
register_monitors(MONITORS)


def announce(st, event: str, **kw):
    """The state after every subscribed monitor saw ``event``."""
    subs = _BY_EVENT.get(event)
    if not subs:
        return st
    mon = st.mon
    new = list(mon)
    changed = False
    for i, m in subs:
        v = m.on(mon[i], event, **kw)
        if v != mon[i]:
            new[i] = v
            changed = True
    if not changed:
        return st
    from .state import State

    return State(st.path, st.scalers, tuple(new))


def value(st, name: str) -> frozenset:
    return st.mon[INDEX[name]]
