"""What the interpreter passes around: observations (what reaches an event), the outcome of a
statement by exit kind, and the frame of the function being interpreted."""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from ..structure import CallSite, FunctionInfo, Region
from .state import State


class OverBudget(Exception):
    """The function is too complex to follow: its analysis is given up (no finding comes of it)."""


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
    #: (``clip``) the call of a utility function through which the clip was reached -> the
    #: states reaching the clip that way (see :attr:`Frame.entry`); they are not in ``states``
    entries: dict = field(default_factory=dict)
    #: the functions whose analysis reached this event (the roots of its calling contexts)
    roots: set = field(default_factory=set)

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
    __slots__ = ("func", "env", "tag", "ctx_regions", "depth", "stack", "scaler_params", "self_cls", "entry", "yield_to")

    def __init__(self, func, env, tag, ctx_regions, depth, stack, scaler_params=frozenset(), self_cls=None,
                 entry=None, yield_to=None):
        self.func: FunctionInfo = func
        self.env: dict[str, str] = env
        self.tag: str = tag
        self.ctx_regions: tuple[Region, ...] = ctx_regions
        self.depth: int = depth
        self.stack: tuple[FunctionInfo, ...] = stack
        self.scaler_params: frozenset[str] = scaler_params
        #: the class ``self`` really is here (a subclass running an inherited method), or None
        self.self_cls = self_cls
        #: the call site that entered the utility this frame belongs to (a plain function,
        #: handed no scaler, that neither meets a scaler nor back-propagates, of any module), or
        #: None: a utility (``clip_grads(model.parameters(), 1.0)``) that clips is wrong where
        #: it is called
        self.entry: CallSite | None = entry
        #: (a generator context manager's frame) the ``with`` body its ``yield`` runs
        self.yield_to = yield_to
