"""Ordered GradScaler events with control flow: a small path-sensitive abstract interpreter.

Each function that touches a scaler is interpreted over its statements with a *set* of
abstract states (one per distinct path fact), so that branches on the same condition stay
correlated (``if use_amp: scaled backward ... if use_amp: scaler.step``), loops are iterated
to a fixpoint (their back edges are where "the next iteration" begins), and
``break``/``continue``/``return``/``raise``/``finally`` route states where Python would.

The state follows GradScaler's own per-optimizer state machine (READY -> UNSCALED ->
STEPPED -> update() -> READY) plus what rules need around it: whether the gradients are
still scaled, plain backwards since the last step, names bound to ``S.scale(...)``, and the
updates made in the current iteration.  Calls to functions and methods of the same file are
interpreted at the call site with their parameters bound to the caller's expressions; a
call of unknown code that receives a scaler makes that scaler's state unknown, and an
unknown state never produces a finding.

Rules do not run this; they read :class:`Observation` s: every event with the set of states
that reach it (``model.flow.observations``).  States also say how trustworthy their path is
(``State.speculative``: through an ``except`` handler, past a ``for`` loop that changes the
scaler's state without running once, or re-branching on a condition whose outcome widening forgot), and :meth:`Flow.alternatives` gives the calls of the exclusive arms
of the branches around a call, for rules that must recognise conditional AMP.
"""

from __future__ import annotations

import operator
import re
from dataclasses import dataclass
from typing import Iterable

import libcst as cst

from .. import torch_api as T
from . import names as N
from .syntax import expr_key, literal_value
from .names import dotted_text
from .scalers import owner_class
from .structure import Alt, Bind, CallSite, FunctionInfo, Region

MAX_STATES = 48
MAX_DEPTH = 4
MAX_LOOP_PASSES = 6
# (statement, state) pairs interpreted per top-level function before the analysis of that function
# is given up, and per file (nested loops whose states keep changing grow exponentially with their
# depth); the public corpus's most complex function needs 156,000
MAX_STEPS = 600_000
MAX_FILE_STEPS = 2_000_000


class _OverBudget(Exception):
    pass

# --- the abstract state ---------------------------------------------------------------

READY, UNSCALED, STEPPED = "R", "U", "S"


class State:
    """Immutable facts on one path.  Unknown is the absence of a fact."""

    __slots__ = (
        "assume", "stage", "known", "grads", "sbw", "plain", "scaled", "iters", "zeroed", "fresh", "lost", "handled",
        "approx", "bypass", "dropped", "done", "_h",
    )

    def __init__(self, assume=frozenset(), stage=frozenset(), known=frozenset(), grads=frozenset(), sbw=frozenset(),
                 plain=frozenset(), scaled=frozenset(), iters=frozenset(), zeroed=frozenset(), fresh=frozenset(),
                 lost=frozenset(), handled=False, approx=False, bypass=frozenset(), dropped=frozenset(),
                 done=frozenset()):
        self.assume: frozenset[tuple[str, bool]] = assume
        # (scaler, optimizer, UNSCALED|STEPPED, node that put it there)
        self.stage: frozenset[tuple[str, str, str, cst.CSTNode]] = stage
        # scalers whose optimizers not listed in ``stage`` are READY (after update() or creation)
        self.known: frozenset[str] = known
        # (scaler, "scaled"|"unscaled"|"clean", node): the gradients' scaling
        self.grads: frozenset[tuple[str, str, cst.CSTNode | None]] = grads
        # (scaler, node): scaled backwards since the last step
        self.sbw: frozenset[tuple[str, cst.CSTNode]] = sbw
        # plain (unscaled) backward calls since the last step / zero_grad
        self.plain: frozenset[cst.CSTNode] = plain
        # (local name, scaler): names bound to ``S.scale(...)``
        self.scaled: frozenset[tuple[str, str]] = scaled
        # (scaler, updates this iteration, optimizers stepped before the last update, since)
        self.iters: frozenset[tuple[str, int, frozenset, frozenset]] = iters
        # (scaler, zero_grad node, receiver key): a ``zero_grad()`` that wiped the gradients of a
        # scaled backward (scaled, or unscaled by ``unscale_``), with no backward since
        self.zeroed: frozenset[tuple[str, cst.CSTNode, str | None]] = zeroed
        # (scaler, constructor node, loop depth): scalers built in the current iteration of the
        # loop at that (dynamic) depth
        self.fresh: frozenset[tuple[str, cst.CSTNode, int]] = fresh
        # scalers whose facts unknown code dropped (``forget``) since their last step / zero_grad:
        # "no scaled backward seen" is then no evidence that none happened
        self.lost: frozenset[str] = lost
        # the path went through an ``except`` handler in this iteration (the exception is assumed
        # raised before the try body's events): a speculative path rules may ignore
        self.handled: bool = handled
        # the path branched again on a condition whose earlier outcome widening had dropped
        # (``dropped``): the two branches are no longer correlated on this path
        self.approx: bool = approx
        # (scaler, node): ``optimizer.step()`` calls on that scaler's still-scaled gradients since
        # its last update (a step that bypassed the scaler)
        self.bypass: frozenset[tuple[str, cst.CSTNode]] = bypass
        # condition keys whose outcome on this path widening forgot
        self.dropped: frozenset[str] = dropped
        # (scaler, UNSCALED|STEPPED, node): earlier passes of a loop over optimizers
        # (``for opt in optimizers: scaler.step(opt)``) moved those optimizers out of READY
        self.done: frozenset[tuple[str, str, cst.CSTNode]] = done
        self._h = hash((assume, stage, known, grads, sbw, plain, scaled, iters, zeroed, fresh, lost, handled, approx,
                        bypass, dropped, done))

    def __hash__(self) -> int:
        return self._h

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, State)
            and self._h == other._h
            and self.assume == other.assume
            and self.stage == other.stage
            and self.known == other.known
            and self.grads == other.grads
            and self.sbw == other.sbw
            and self.plain == other.plain
            and self.scaled == other.scaled
            and self.iters == other.iters
            and self.zeroed == other.zeroed
            and self.fresh == other.fresh
            and self.lost == other.lost
            and self.handled == other.handled
            and self.approx == other.approx
            and self.bypass == other.bypass
            and self.dropped == other.dropped
            and self.done == other.done
        )

    def replace(self, **kw) -> "State":
        vals = list(_STATE_GET(self))
        for k, v in kw.items():
            vals[_STATE_INDEX[k]] = v
        return State(*vals)

    # queries used by rules -----------------------------------------------------------

    def stage_of(self, scaler: str, opt: str) -> tuple[str, cst.CSTNode | None] | None:
        """(READY|UNSCALED|STEPPED, node) for one optimizer; None when unknown."""
        for s, o, st, node in self.stage:
            if s == scaler and o == opt:
                return st, node
        if scaler in self.known:
            return READY, None
        return None

    def stages(self, scaler: str) -> list[tuple[str, str, cst.CSTNode]]:
        return [(o, st, node) for s, o, st, node in self.stage if s == scaler]

    def all_ready(self, scaler: str) -> bool:
        return (scaler in self.known and not any(s == scaler for s, *_ in self.stage)
                and not any(s == scaler for s, *_ in self.done))

    def grads_of(self, scaler: str) -> tuple[str, cst.CSTNode | None] | None:
        for s, status, node in self.grads:
            if s == scaler:
                return status, node
        return None

    def scaled_grads(self) -> list[tuple[str, cst.CSTNode | None]]:
        return [(s, node) for s, status, node in self.grads if status == "scaled"]

    def scaled_backwards(self, scaler: str) -> list[cst.CSTNode]:
        return [n for s, n in self.sbw if s == scaler]

    def iteration(self, scaler: str) -> tuple[int, frozenset, frozenset] | None:
        for s, n, prev, cur in self.iters:
            if s == scaler:
                return n, prev, cur
        return None

    def bypassed(self, scaler: str) -> list[cst.CSTNode]:
        """``optimizer.step()`` calls that consumed ``scaler``'s scaled gradients since its last update."""
        return [n for s, n in self.bypass if s == scaler]

    def zeroed_of(self, scaler: str) -> list[tuple[cst.CSTNode, str | None]]:
        """``zero_grad()`` calls (node, receiver key) that wiped the gradients of ``scaler``'s scaled
        backward before its step, with no backward since."""
        return [(n, r) for s, n, r in self.zeroed if s == scaler]

    @property
    def speculative(self) -> bool:
        """A path that rules needing exact paths should not trust: through an ``except`` handler
        (the exception assumed raised before the try body's events), past a ``for`` loop that
        ran zero times although its body changes the state, or one that branched again
        on a condition whose earlier outcome widening had dropped."""
        return self.handled or self.approx

    def knows_backwards(self, scaler: str) -> bool:
        """Every scaled backward of ``scaler`` since its last step is in ``scaled_backwards``: no
        unknown code that could have run one has touched the scaler since."""
        return scaler not in self.lost

    def scaler_of_name(self, name: str) -> str | None:
        for n, s in self.scaled:
            if n == name:
                return s
        return None

    # transitions (GradScaler semantics) ----------------------------------------------

    def forget(self, scaler: str) -> "State":
        return self.replace(
            stage=frozenset(x for x in self.stage if x[0] != scaler),
            known=self.known - {scaler},
            grads=frozenset(x for x in self.grads if x[0] != scaler),
            sbw=frozenset(x for x in self.sbw if x[0] != scaler),
            iters=frozenset(x for x in self.iters if x[0] != scaler),
            zeroed=frozenset(x for x in self.zeroed if x[0] != scaler),
            lost=self.lost | {scaler},
            bypass=frozenset(x for x in self.bypass if x[0] != scaler),
            done=frozenset(x for x in self.done if x[0] != scaler),
        )

    def _set_grads(self, scaler: str, status: str, node) -> frozenset:
        return frozenset(x for x in self.grads if x[0] != scaler) | {(scaler, status, node)}

    def _set_stage(self, scaler: str, opt: str, st: str, node) -> frozenset:
        return frozenset(x for x in self.stage if not (x[0] == scaler and x[1] == opt)) | {(scaler, opt, st, node)}


_STATE_FIELDS = tuple(f for f in State.__slots__ if f != "_h")
_STATE_GET = operator.attrgetter(*_STATE_FIELDS)
_STATE_INDEX = {f: i for i, f in enumerate(_STATE_FIELDS)}


def _iter_step(state: State, scaler: str, opt: str) -> frozenset:
    it = state.iteration(scaler)
    n, prev, cur = it if it is not None else (0, frozenset(), frozenset())
    rest = frozenset(x for x in state.iters if x[0] != scaler)
    return rest | {(scaler, n, prev, cur | {opt})}


def _iter_update(state: State, scaler: str) -> frozenset:
    it = state.iteration(scaler)
    n, prev, cur = it if it is not None else (0, frozenset(), frozenset())
    rest = frozenset(x for x in state.iters if x[0] != scaler)
    return rest | {(scaler, n + 1, prev | cur, frozenset())}


# --- observations ---------------------------------------------------------------------


@dataclass(eq=False)
class Observation:
    """An event on one call site, in one calling context, with the states that reach it."""

    # create scale scaled_backward backward unscale step update opt_step zero_grad clip backedge, and
    # recreate: a constructor that runs again on every iteration of the loop that steps its scaler
    kind: str
    node: cst.CSTNode
    site: CallSite | None
    scaler: str | None
    opt: str | None
    regions: tuple[Region, ...]
    func: FunctionInfo
    states: set[State]
    inlined: bool = False

    def in_region(self, *kinds: str) -> Region | None:
        """The innermost region of one of ``kinds`` (grad-mode regions: the one in effect)."""
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


_PURE_BUILTINS = frozenset(
    {
        "print", "len", "isinstance", "issubclass", "getattr", "hasattr", "id", "type", "str", "repr", "float", "int",
        "bool", "range", "enumerate", "zip", "min", "max", "sum", "abs", "round", "list", "tuple", "dict", "set",
        "sorted", "reversed", "format", "any", "all", "iter", "next", "map", "filter", "hash", "callable", "vars",
    }
)
_SCALER_QUERIES = T.SCALER_QUERIES
_HARMLESS_BASES = frozenset({"", "object", "ABC", "abc.ABC", "Generic", "Protocol", "nn.Module", "torch.nn.Module", "Module"})
_OPT_NAME = T.OPTIMIZER_NAME


class Flow:
    def __init__(self, model) -> None:
        self.m = model
        self.scalers = model.scalers
        self.observations: list[Observation] = []
        self._obs_index: dict[tuple, Observation] = {}
        self._memo: dict[tuple, Outs] = {}
        self._cond_text: dict[cst.CSTNode, str] = {}
        self._assigned_in: dict[cst.CSTNode, frozenset[str]] = {}
        self._instances = self._instance_vars()
        self._stored: dict[int, dict[str, str]] = {}
        # root-space keys an object keeps for another one (``w.grad_scaler`` -> ``scaler``)
        self.object_aliases: dict[str, str] = {}
        self.opt_texts = self._optimizer_texts()
        self.module_defs = model.top.local_defs
        self.classes_by_name = {c.name: c for c in model.classes}
        self.self_aliases = self._class_aliases()
        self.interesting = self._interesting_conditions()
        self._fsdp_models = self._fsdp_bound()
        self._transparency: dict[FunctionInfo, bool] = {}
        self._attrs_memo: dict[FunctionInfo, frozenset[str]] = {}
        self._scaler_names = self._names_of_scalers()
        # dynamic nesting depth of the loops being interpreted (callers' loops included)
        self._loop_depth = 0
        # (frame, loop, env, input states) -> result: a loop nested in another is evaluated again
        # on every pass of the outer one, mostly with the same states (without this, the cost
        # doubles with each level of nesting)
        self._loop_memo: dict[tuple, Outs] = {}
        self._mentions_memo: dict[tuple[str, frozenset], bool] = {}
        self._budget = MAX_STEPS
        self._file_budget = MAX_FILE_STEPS
        self.abandoned: list[FunctionInfo] = []  # functions too complex to follow (no findings)
        self._create_obs: dict[cst.CSTNode, Observation] = {}
        self._alternatives: dict[cst.CSTNode, frozenset] | None = None
        self._relevant_tests: set[cst.CSTNode] | None = None
        # condition keys remembered by branches that guard scaler-flow events: only forgetting
        # those (widening) can make up an infeasible combination of events
        self._relevant_keys: set[str] = set()
        self._undrop_cache: dict[tuple, frozenset[str]] = {}

    # --- driver ----------------------------------------------------------------------

    def run(self) -> None:
        for func in self.m.relevant_functions():
            frame = Frame(func, {}, "", (), 0, (func,))
            mark = len(self.observations)
            self._budget = min(MAX_STEPS, self._file_budget)
            start = self._budget
            try:
                self.block(frame, func.body, {State()})
            except _OverBudget:
                # give up on this function (deeply nested loops whose states keep changing):
                # none of its observations is kept, so no rule concludes anything from it
                for obs in self.observations[mark:]:
                    self._obs_index.pop((obs.kind, obs.node, obs.scaler, obs.opt, tuple(id(r) for r in obs.regions)), None)
                del self.observations[mark:]
                self.abandoned.append(func)
            self._file_budget -= start - max(self._budget, 0)

    # --- observations ----------------------------------------------------------------

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

    # --- exclusive branches ----------------------------------------------------------

    def _guards_events(self, test: cst.BaseExpression) -> bool:
        """The ``if``/``while``/conditional expression testing ``test`` has scaler-flow events
        (scaler calls, backwards, optimizer steps, zero_grad, clips, calls of this file's
        functions that have some) in its arms: which arm runs changes the facts."""
        if self._relevant_tests is None:
            relevant_funcs = set(self.m.relevant_functions())
            self._relevant_tests = set()
            for node, calls in _arm_calls(self.m.module).items():
                for c in calls:
                    site = self.m.call_of.get(c)
                    if site is None:
                        continue
                    if site.method in _FLOW_METHODS or site.qual in N.CLIP_FUNCTIONS or self.scalers.is_ctor_call(c):
                        self._relevant_tests.add(node)
                        break
                    callee = self.m.callee_of(site)
                    if callee is not None and callee in relevant_funcs:
                        self._relevant_tests.add(node)
                        break
        return test in self._relevant_tests

    def alternatives(self, node: cst.CSTNode, amp_conditions: bool = False) -> frozenset:
        """Call nodes in the other arms of every ``if``/``elif``/``else``, conditional expression
        and ``match`` enclosing the call ``node``: code that never runs in the same pass through
        those statements as ``node`` (``scaler.step(opt)`` for the ``optimizer.step()`` of an
        ``else:`` branch), whatever the conditions.  With ``amp_conditions``, only the arms of
        branches whose condition reads like an AMP switch (``use_amp``, ``scaler is not None``,
        ``self.fp16``, ``args.precision == "16"``...)."""
        if self._alternatives is None:
            self._alternatives = _exclusive_arms(self.m.module)
        paths, arm_calls, arms_of = self._alternatives
        out: set[cst.CSTNode] = set()
        for owner, test, i in paths.get(node, ()):
            if amp_conditions and not _amp_switch(self._test_text(test)):
                continue
            for j in range(arms_of[owner]):
                if j != i:
                    out |= arm_calls.get((owner, j), set())
        return frozenset(out)

    def enclosing_tests(self, node: cst.CSTNode) -> list[str]:
        """Compact texts of the conditions of the branches (if / conditional expression / match)
        around the call ``node``, outermost first."""
        if self._alternatives is None:
            self._alternatives = _exclusive_arms(self.m.module)
        return [self._test_text(test) for _owner, test, _i in self._alternatives[0].get(node, ())]

    def _test_text(self, test: cst.CSTNode) -> str:
        text = self._cond_text.get(test)
        if text is None:
            text = _compact(self.m.code_for(test))
            self._cond_text[test] = text
        return text

    # --- keys ------------------------------------------------------------------------

    def canon(self, frame: Frame, text: str | None, _depth: int = 0) -> str | None:
        if text is None:
            return None
        m = _HEAD.match(text)
        head = m.group(0) if m else text
        rest = text[len(head):]
        alias = self.scalers.aliases.get(frame.func, {}).get(head)
        if alias is not None and _depth < 4:
            return self.canon(frame, alias + rest, _depth + 1)
        if head == "self" and self.self_aliases and _depth < 4:
            table = self.self_aliases.get(owner_class(frame.func), {})
            for prefix, src in table.items():
                if text == prefix or text.startswith(prefix + "."):
                    return self.canon(frame, src + text[len(prefix):], _depth + 1)
        if head in frame.env:
            out = frame.env[head] + rest
        elif frame.tag and (frame.func.is_local(head) or head == "self"):
            out = frame.tag + text
        else:
            out = text
        return self._object_alias(out) if self.object_aliases else out

    def _object_alias(self, key: str) -> str:
        for _ in range(4):
            for prefix, src in self.object_aliases.items():
                if key == prefix or key.startswith(prefix + "."):
                    key = src + key[len(prefix):]
                    break
            else:
                return key
        return key

    def is_scaler(self, frame: Frame, text: str | None) -> bool:
        if text is None:
            return False
        if text in frame.scaler_params:
            return True
        return self.scalers.is_scaler(frame.func, text)

    def opt_key(self, frame: Frame, node: cst.BaseExpression | None) -> str:
        if node is None:
            return "?"
        key = expr_key(node)
        if key is None:
            return f"?{id(node)}"
        return self.canon(frame, key) or key

    # --- statements ------------------------------------------------------------------

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
            raise _OverBudget
        t = type(s)
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
                cur = self.items(frame, self.m.seqs.get(small, ()), cur)
                if st is cst.Return:
                    self._escape_return(frame, small, cur)
                    return Outs(ret=cur)
                if st is cst.Raise:
                    return Outs(exc=cur)
                if st is cst.Assign or st is cst.AnnAssign or st is cst.AugAssign:
                    cur = self.assign(frame, small, cur)
                if not cur:
                    break
            return Outs(normal=cur)
        if t is cst.If:
            cur = self.items(frame, self.m.seqs.get(s, ()), states)
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
            cur = self.items(frame, self.m.seqs.get(s, ()), states)
            for wi in s.items:
                if wi.asname is not None:
                    cur = self.rebind(frame, _target_heads(wi.asname.name), cur)
            return self.block(frame, _body(s.body), cur)
        if t is cst.Try or t is cst.TryStar:
            return self.try_(frame, s, states)
        if t is cst.Match:
            cur = self.items(frame, self.m.seqs.get(s, ()), states)
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
        return Outs(set(hit.normal), set(hit.brk), set(hit.cont), set(hit.ret), set(hit.exc))

    def _loop(self, frame: Frame, s: cst.For | cst.While, cur: set[State]) -> Outs:
        infinite = isinstance(s, cst.While) and literal_value(s.test) is True
        targets = _target_heads(s.target) if isinstance(s, cst.For) else frozenset()
        canon_targets = frozenset(self.canon(frame, t) or t for t in targets)
        assigned = self._loop_assigned(s) | targets
        canon_assigned = frozenset(self.canon(frame, a) or a for a in assigned)
        # ``for opt in optimizers: scaler.step(opt)``: one training iteration, never empty
        per_opt = isinstance(s, cst.For) and self._over_optimizers(frame, s, targets)
        entry = cur if per_opt else {self._new_iteration(st) for st in cur}
        head = entry
        out = Outs()
        body = _body(s.body)
        carried: set[State] = set()
        iterated: set[State] = set()
        for _ in range(MAX_LOOP_PASSES):
            body_in = head
            if isinstance(s, cst.For):
                body_in = self.rebind(frame, targets, body_in)
            elif not infinite:
                body_in = self.assume(frame, s.test, True, body_in)
            o = self.block(frame, body, body_in)
            out.merge(o, normal=False)
            raw = o.normal | o.cont
            back = {self._drop_target_stages(st, canon_targets) for st in raw}
            if back:
                self.observe(frame, "backedge", s, None, None, None, back, regions=frame.ctx_regions)
                self._per_iteration_creates(frame, back)
            if per_opt:
                # the next pass steps another optimizer: keep what this one did under another key
                back = {self._next_optimizer(st, canon_targets, canon_assigned) for st in raw}
                carried |= back
            else:
                back = {self._next_iteration(st, canon_assigned) for st in back}
                iterated |= back
            new_head = self.widen(entry | back)
            if new_head == head:
                break
            head = new_head
        exits: set[State] = set()
        if not infinite:
            exits = head if isinstance(s, cst.For) else self.assume(frame, s.test, False, head)
            if isinstance(s, cst.For) and not per_opt and iterated:
                # a training loop that never runs once (an empty loader) is not what anyone means:
                # the path that skips it is kept, but as speculative
                exits = self.widen({st.replace(approx=True) if st in entry and st not in iterated else st
                                    for st in exits})
            if per_opt and carried:
                exits = self.widen(carried)  # at least one optimizer was stepped
        ret = out.ret if per_opt else {self._new_iteration(st) for st in out.ret}
        result = Outs(ret=ret, exc=out.exc)
        if s.orelse is not None and exits:
            result.merge(self.block(frame, _body(s.orelse.body), exits))
        else:
            result.normal |= exits
        # ``break`` (and ``return`` above) leave the loop mid-iteration: what that iteration
        # stepped is not the enclosing iteration's
        result.normal |= out.brk if per_opt else {self._new_iteration(st) for st in out.brk}
        result.normal = self.widen(result.normal)
        return result

    def try_(self, frame: Frame, s: cst.Try | cst.TryStar, states: set[State]) -> Outs:
        body = self.block(frame, _body(s.body), states)
        combined = Outs(brk=set(body.brk), cont=set(body.cont), ret=set(body.ret))
        if s.orelse is not None:
            combined.merge(self.block(frame, _body(s.orelse.body), body.normal))
        else:
            combined.normal |= body.normal
        if s.handlers:
            # An exception may come from anywhere in the body; we model it as raised before the
            # body's events (the optimistic choice) plus the explicit ``raise`` statements.
            handler_in = {st.replace(handled=True) if not st.handled else st for st in set(states) | body.exc}
            for h in s.handlers:
                cur = handler_in
                if h.name is not None:
                    cur = self.rebind(frame, _target_heads(h.name.name), cur)
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

    # --- expressions / events --------------------------------------------------------

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

    def call(self, frame: Frame, cs: CallSite, states: set[State]) -> set[State]:
        out = self._call(frame, cs, states)
        last = (cs.text or "").rsplit(".", 1)[-1]
        if last != "backward" and _BACKWARD_LIKE.match(last):
            # ``self.manual_backward(loss)``, ``engine.backward_step(loss)``: may produce gradients
            out = {st.replace(zeroed=frozenset()) if st.zeroed else st for st in out}
        return out

    def _call(self, frame: Frame, cs: CallSite, states: set[State]) -> set[State]:
        m = cs.method
        recv = cs.recv
        if recv is not None and m is not None and self.is_scaler(frame, recv):
            return self.scaler_call(frame, cs, self.canon(frame, recv) or recv, states)
        if m == "backward":
            callee = self.resolve(frame, cs) if recv in ("self", "cls") else None
            if callee is not None:  # ``self.backward(loss)``: a method of this file
                return self.inline(frame, cs, callee[0], callee[1], states)
            return self.backward(frame, cs, cs.recv_node, states)
        qual = cs.qual
        if qual is not None:
            if qual in N.AUTOGRAD_BACKWARD:
                first = cs.arg(0, "tensors")
                return self.backward(frame, cs, first.value if first is not None else None, states)
            if qual in N.CLIP_FUNCTIONS:
                self.observe(frame, "clip", cs.node, cs, None, None, states)
                return states
            if qual in N.NORM_FUNCTIONS or qual in _GRAD_EDIT_FUNCTIONS or qual in _GRAD_READ_FUNCTIONS:
                first = cs.arg(0, "input")
                if first is not None and _mentions_grad(first.value) and not _predicate_chain(first.value):
                    self.observe(frame, "clip", cs.node, cs, None, None, states)
                return states
            if qual.startswith("torch.") or qual.split(".", 1)[0] in _PURE_MODULES:
                return states
        if m in _GRAD_READS and _mentions_grad(cs.recv_node) and not _predicate_chain(cs.recv_node):
            # ``p.grad.norm()``, ``p.grad.pow(2).sum()``, ``p.grad.abs().max()``: a magnitude
            # read from scaled gradients is the scale times too large
            self.observe(frame, "clip", cs.node, cs, None, None, states)
            return states
        if m in _GRAD_EDITS and _mentions_grad(cs.recv_node):
            # ``p.grad.clamp_(-1, 1)``, ``p.grad.data.nan_to_num_()``: an edit that is not a
            # rescaling gives a different result on scaled gradients
            self.observe(frame, "clip", cs.node, cs, None, None, states)
            return states
        if m == "clip_grad_norm_" and recv is not None and recv in self._fsdp_models:
            # FSDP's own ``model.clip_grad_norm_()`` does not unscale either
            self.observe(frame, "clip", cs.node, cs, None, None, states)
            return states
        if m == "zero_grad":
            rkey = self.canon(frame, recv)
            self.observe(frame, "zero_grad", cs.node, cs, None, rkey, states)
            return {st.replace(
                grads=frozenset((s, "clean", None) for s, _, _ in st.grads),
                sbw=frozenset(),
                plain=frozenset(),
                zeroed=st.zeroed | {(s, cs.node, rkey) for s, status, _ in st.grads if status != "clean"},
                lost=frozenset(),
            ) for st in states}
        if m == "step" and recv is not None and self._is_optimizer(frame, cs):
            o = self.canon(frame, recv) or recv
            self.observe(frame, "opt_step", cs.node, cs, None, o, states)
            return {st.replace(
                plain=frozenset(),
                bypass=st.bypass | {(s, cs.node) for s, status, _ in st.grads if status == "scaled"},
            ) for st in states}
        callee = self.resolve(frame, cs)
        if callee is not None:
            fn, self_key = callee
            if self._transparent(fn) and not self._passes_scaler(frame, cs):
                return self._skip_transparent(frame, fn, self_key, states)
            return self.inline(frame, cs, fn, self_key, states)
        return self.unknown_call(frame, cs, states)

    # --- callees that cannot touch a scaler --------------------------------------------

    def _transparent(self, func: FunctionInfo) -> bool:
        """``func`` (and what it calls in this file) has no event the interpreter reads: no scaler
        method, backward, step, zero_grad, clip or norm call, no GradScaler constructor, no
        mention of a scaler's name, and it hands ``self`` to no other code. Interpreting it
        cannot change a state, so calls of it are skipped (their assignments still forget the
        conditions they rebind)."""
        hit = self._transparency.get(func)
        if hit is not None:
            return hit
        self._transparency[func] = False  # recursion: assume it matters
        result = self._compute_transparent(func)
        self._transparency[func] = result
        return result

    def _compute_transparent(self, func: FunctionInfo) -> bool:
        names = self._scaler_names
        cls = owner_class(func)
        for c in func.calls:
            last = (c.text or c.method or "").rsplit(".", 1)[-1]
            if last in _EVENT_CALLS or (c.method is not None and c.method in _EVENT_CALLS) or _BACKWARD_LIKE.match(last):
                return False
            if (c.method in _GRAD_EDITS or c.method in _GRAD_READS) and _mentions_grad(c.recv_node):
                return False
            if c.qual in _GRAD_EDIT_FUNCTIONS or c.qual in _GRAD_READ_FUNCTIONS:
                return False
            if c.qual is not None and (c.qual in N.CLIP_FUNCTIONS or c.qual in N.NORM_FUNCTIONS
                                       or c.qual in N.AUTOGRAD_BACKWARD or c.qual in N.AUTOGRAD_GRAD):
                return False
            if self.scalers.is_ctor_call(c.node):
                return False
            if any(expr_key(a.value) in ("self", "cls") for a in c.node.args):
                return False
            if c.text is None and isinstance(c.node.func, cst.Attribute) and isinstance(c.node.func.value, cst.Call):
                inner = c.node.func.value.func
                if isinstance(inner, cst.Name) and inner.value == "super":
                    return False
            callee = self.m.callee_of(c)
            if callee is not None:
                if not self._transparent(callee):
                    return False
            elif c.recv in ("self", "cls") and (cls is None or c.method not in self.m.self_attrs.get(cls, ())):
                return False  # an inherited method of unknown code
            for text in (c.recv or "",):
                if any(part in names for part in text.split(".")):
                    return False
        for text in self.m.value_texts.get(func, ()):
            if any(part in names for part in text.split(".")):
                return False
        for a in self.m.assignments:
            if a.func is func and any(t is not None and t.rsplit(".", 1)[-1] in names for t in a.targets):
                return False
        for d in func.local_defs.values():
            if not self._transparent(d):
                return False
        return True

    def _passes_scaler(self, frame: Frame, cs: CallSite) -> bool:
        for a in cs.node.args:
            key = expr_key(a.value)
            if key is not None and self.is_scaler(frame, key):
                return True
        return False

    def _skip_transparent(self, frame: Frame, func: FunctionInfo, self_key: str | None,
                          states: set[State]) -> set[State]:
        attrs = self._assigned_attrs(func)
        if not attrs or self_key is None:
            return states
        base = self.canon(frame, self_key) or self_key
        return self.rebind(frame, {f"{self_key}.{a}" for a in attrs}, states) if base else states

    def _assigned_attrs(self, func: FunctionInfo) -> frozenset[str]:
        """``self.<attr>`` names a method (and its in-file callees) assigns."""
        hit = self._attrs_memo.get(func)
        if hit is None:
            self._attrs_memo[func] = frozenset()
            out: set[str] = set()
            for a in self.m.assignments:
                if a.func is func:
                    out.update(t[5:] for t in a.targets if t is not None and t.startswith("self."))
            for c in func.calls:
                callee = self.m.callee_of(c)
                if callee is not None and c.recv in ("self", "cls"):
                    out |= self._assigned_attrs(callee)
            hit = self._attrs_memo[func] = frozenset(out)
        return hit

    def scaler_call(self, frame: Frame, cs: CallSite, s: str, states: set[State]) -> set[State]:
        m = cs.method
        states = self._assume_scaler(s, states)
        if not states:
            return states
        if m == "scale":
            self.observe(frame, "scale", cs.node, cs, s, None, states)
            return states
        if m == "unscale_":
            arg = cs.arg(0, "optimizer")
            o = self.opt_key(frame, arg.value if arg is not None else None)
            self.observe(frame, "unscale", cs.node, cs, s, o, states)
            return {st.replace(stage=st._set_stage(s, o, UNSCALED, cs.node), grads=st._set_grads(s, "unscaled", cs.node))
                    for st in states}
        if m == "step":
            arg = cs.arg(0, "optimizer")
            o = self.opt_key(frame, arg.value if arg is not None else None)
            self.observe(frame, "step", cs.node, cs, s, o, states)
            return {st.replace(
                stage=st._set_stage(s, o, STEPPED, cs.node),
                grads=st._set_grads(s, "clean", cs.node),
                sbw=frozenset(x for x in st.sbw if x[0] != s),
                plain=frozenset(),
                iters=_iter_step(st, s, o),
                zeroed=frozenset(x for x in st.zeroed if x[0] != s),
                lost=st.lost - {s},
            ) for st in states}
        if m == "update":
            self.observe(frame, "update", cs.node, cs, s, None, states)
            return {st.replace(
                stage=frozenset(x for x in st.stage if x[0] != s),
                known=st.known | {s},
                iters=_iter_update(st, s),
                zeroed=frozenset(x for x in st.zeroed if x[0] != s),
                bypass=frozenset(x for x in st.bypass if x[0] != s),
                done=frozenset(x for x in st.done if x[0] != s),
            ) for st in states}
        if m in _SCALER_QUERIES:
            return states
        # any other method (private helpers, monkey-patched ones) may change the scaler
        return {st.forget(s) for st in states}

    def backward(self, frame: Frame, cs: CallSite, tensor: cst.BaseExpression | None, states: set[State]) -> set[State]:
        s = self._scaled_source(frame, tensor)
        if s is not None:
            states = self._assume_scaler(s, states)
            self.observe(frame, "scaled_backward", cs.node, cs, s, None, states)
            return {st.replace(grads=st._set_grads(s, "scaled", cs.node), sbw=st.sbw | {(s, cs.node)},
                               zeroed=frozenset()) for st in states}
        name = expr_key(tensor) if tensor is not None else None
        out = set()
        plain = []
        for st in states:
            src = st.scaler_of_name(self.canon(frame, name) or "") if name is not None else None
            if src is not None:
                self.observe(frame, "scaled_backward", cs.node, cs, src, None, {st})
                out.add(st.replace(grads=st._set_grads(src, "scaled", cs.node), sbw=st.sbw | {(src, cs.node)},
                                   zeroed=frozenset()))
            else:
                plain.append(st)
        if plain:
            self.observe(frame, "backward", cs.node, cs, None, None, plain)
            out.update(st.replace(plain=st.plain | {cs.node}, zeroed=frozenset()) for st in plain)
        return out

    def _scaled_source(self, frame: Frame, tensor: cst.BaseExpression | None) -> str | None:
        """The scaler whose ``scale(...)`` produced ``tensor`` syntactically, if any."""
        if tensor is None:
            return None
        if isinstance(tensor, cst.Call) and isinstance(tensor.func, cst.Attribute) and tensor.func.attr.value == "scale":
            recv = expr_key(tensor.func.value)
            if self.is_scaler(frame, recv):
                return self.canon(frame, recv)
        if isinstance(tensor, cst.BinaryOperation):
            return self._scaled_source(frame, tensor.left) or self._scaled_source(frame, tensor.right)
        if isinstance(tensor, cst.Call) and len(tensor.args) == 2 and self.m.imports.qualify(tensor.func) in _CASTS:
            return self._scaled_source(frame, tensor.args[1].value)  # ``cast(Tensor, scaler.scale(loss))``
        return None

    def unknown_call(self, frame: Frame, cs: CallSite, states: set[State]) -> set[State]:
        """Unknown code that can reach a scaler (an argument, or its owner) may do anything to it."""
        reach: list[str] = []
        if cs.text is not None and "." not in cs.text and cs.text in _PURE_BUILTINS:
            return states
        for a in cs.node.args:
            key = expr_key(a.value)
            if key is not None:
                reach.append(self.canon(frame, key) or key)
        recv = cs.recv
        if recv is not None and self._recv_may_touch(frame, cs):
            reach.append(self.canon(frame, recv) or recv)
        if not reach:
            return states
        out = set()
        for st in states:
            for s in _scalers_in(st):
                if any(s == r or s.startswith(r + ".") for r in reach):
                    st = st.forget(s)
            out.add(st)
        return out

    def _recv_may_touch(self, frame: Frame, cs: CallSite) -> bool:
        """``self.foo()`` where ``foo`` may be an inherited method of unknown code."""
        recv = cs.recv
        if recv != "self":
            return True  # ``obj.method()`` may change ``obj.scaler``; unknown_call checks the prefix
        cls = owner_class(frame.func)
        if cls is None:
            return True
        attr = cs.method or ""
        if attr in self.m.self_attrs.get(cls, ()):
            return False  # ``self.model(x)``: an attribute, not a method
        c = cls
        while c is not None:
            if any(b not in _HARMLESS_BASES and b not in self.classes_by_name for b in c.bases):
                return True
            c = self.classes_by_name.get(c.bases[0]) if c.bases else None
            if c is cls:
                break
        return False

    def _assume_scaler(self, s: str, states: set[State]) -> set[State]:
        """A scaler method ran, so the scaler is not None on this path."""
        self._relevant_keys.add(s)
        out = set()
        for st in states:
            if (s, False) in st.assume:
                continue
            if (s, True) not in st.assume:
                st = st.replace(assume=st.assume | {(s, True)})
            out.add(st)
        return out

    def _is_optimizer(self, frame: Frame, cs: CallSite) -> bool:
        recv = cs.recv or ""
        if recv in self.opt_texts:
            return True
        last = recv.rsplit(".", 1)[-1]
        return bool(_OPT_NAME.search(last)) and "sched" not in last.lower() and "wrapper" not in last.lower()

    # --- calls into this file's own code ---------------------------------------------

    def resolve(self, frame: Frame, cs: CallSite) -> tuple[FunctionInfo, str | None] | None:
        text = cs.text
        func = frame.func
        if text is None:
            f = cs.node.func
            if (isinstance(f, cst.Attribute) and isinstance(f.value, cst.Call) and isinstance(f.value.func, cst.Name)
                    and f.value.func.value == "super"):
                cls = owner_class(func)
                if cls is None:
                    return None
                for base in cls.bases:
                    target = self._method(self.classes_by_name.get(base), f.attr.value)
                    if target is not None:
                        return target, "self"
            return None
        if "." not in text:
            f2: FunctionInfo | None = func
            while f2 is not None:
                d = f2.local_defs.get(text)
                if d is not None:
                    return d, None
                if f2.is_local(text):
                    return None
                f2 = f2.parent
            return None
        head, _, attr = text.rpartition(".")
        cls = owner_class(func)
        if head in ("self", "cls") and cls is not None:
            target = self._method(cls, attr)
            if target is not None:
                return target, head
            return None
        c = self.classes_by_name.get(head)
        if c is not None:
            target = self._method(c, attr)
            if target is not None and (target.is_static or target.is_classmethod):
                return target, None
            return None
        if head.startswith("self.") and cls is not None:
            inst = self._instances.get((cls, head))
        else:
            inst = self._instances.get((func, head)) or self._instances.get((None, head))
        if inst is not None:
            target = self._method(inst, attr)
            if target is not None:
                return target, head
        return None

    def _method(self, cls, name: str) -> FunctionInfo | None:
        seen = set()
        todo = [cls]
        while todo:
            c = todo.pop(0)
            if c is None or id(c) in seen:
                continue
            seen.add(id(c))
            m = c.methods.get(name)
            if m is not None:
                return m
            todo.extend(self.classes_by_name.get(b) for b in c.bases)
        return None

    def inline(self, frame: Frame, cs: CallSite, callee: FunctionInfo, self_key: str | None,
               states: set[State]) -> set[State]:
        if frame.depth >= MAX_DEPTH or callee in frame.stack:
            return self.unknown_call(frame, cs, states)
        env: dict[str, str] = {}
        scaler_params: set[str] = set()
        params = list(callee.params)
        bound_self = callee.cls is not None and not callee.is_static and (self_key is not None or callee.is_classmethod)
        if bound_self and params:
            first = params.pop(0)
            if self_key is not None:
                env[first] = self.canon(frame, self_key) or self_key
        positional = [a for a in cs.node.args if a.keyword is None and not a.star]
        for p, a in zip([p for p in params if p not in callee.kwonly], positional):
            self._bind(frame, env, scaler_params, p, a.value)
        for a in cs.node.args:
            if a.keyword is not None and a.keyword.value in params:
                self._bind(frame, env, scaler_params, a.keyword.value, a.value)
        regions = frame.ctx_regions + cs.regions
        tag = f"{callee.qualname}#{frame.depth + 1}."
        key = (callee, tuple(sorted(env.items())), tuple(id(r) for r in regions), frozenset(states), self._loop_depth)
        hit = self._memo.get(key)
        if hit is not None:
            return set(hit.normal)
        sub = Frame(callee, env, tag, regions, frame.depth + 1, frame.stack + (callee,), frozenset(scaler_params))
        o = self.block(sub, callee.body, states)
        result = Outs(normal=self._strip_frame(o.normal | o.ret, tag))
        if not result.normal and states and callee.cls is not None:
            # a method that always raises (``raise NotImplementedError``): subclasses override it
            result = Outs(normal=self.unknown_call(frame, cs, states))
        self._memo[key] = result
        return set(result.normal)

    def _bind(self, frame: Frame, env: dict, scaler_params: set, param: str, value: cst.BaseExpression) -> None:
        key = expr_key(value)
        if key is None:
            env[param] = f"?{id(value)}"
            return
        env[param] = self.canon(frame, key) or key
        if self.is_scaler(frame, key):
            scaler_params.add(param)

    def _strip_frame(self, states: set[State], tag: str) -> set[State]:
        out = set()
        for st in states:
            if any(k.startswith(tag) for k, _ in st.assume) or any(n.startswith(tag) for n, _ in st.scaled):
                st = st.replace(
                    assume=frozenset(x for x in st.assume if not x[0].startswith(tag)),
                    scaled=frozenset(x for x in st.scaled if not x[0].startswith(tag)),
                )
            out.add(st)
        return out

    # --- assignments and conditions --------------------------------------------------

    def assign(self, frame: Frame, small: cst.CSTNode, states: set[State]) -> set[State]:
        targets: list[cst.BaseExpression] = []
        if isinstance(small, cst.Assign):
            targets = [t.target for t in small.targets]
        else:  # AnnAssign, AugAssign, NamedExpr
            targets = [small.target]  # type: ignore[attr-defined]
        value = getattr(small, "value", None)
        heads: set[str] = set()
        for t in targets:
            heads |= _target_heads(t)
        cur = self.rebind(frame, heads, states, keep_scaled=isinstance(small, cst.AugAssign))
        if isinstance(small, cst.AugAssign):
            return cur
        scaled_by = self._scaled_source(frame, value) if isinstance(value, cst.Call) else None
        built = None
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Name):
            built = self.classes_by_name.get(value.func.value)
        for t in targets:
            key = expr_key(t)
            if key is None:
                continue
            ckey = self.canon(frame, key) or key
            if built is not None:
                for attr, arg in self._constructor_aliases(built, value):
                    src = self.canon(frame, expr_key(arg))
                    if src is not None:
                        self.object_aliases[f"{ckey}.{attr}"] = src
            if scaled_by is not None and isinstance(t, cst.Name):
                cur = {st.replace(scaled=st.scaled | {(ckey, scaled_by)}) for st in cur}
            if self.is_scaler(frame, key):
                ctor = self.scalers.ctor_in(value)
                if ctor is not None:
                    site = self.m.call_of.get(ctor)
                    self._create_obs.setdefault(ctor, self.observe(frame, "create", ctor, site, ckey, None, cur))
                    made = (ckey, ctor, self._loop_depth)
                    fresh = set()
                    for st in cur:
                        st = st.forget(ckey)
                        fresh.add(st.replace(known=st.known | {ckey}, lost=st.lost - {ckey},
                                             fresh=frozenset(x for x in st.fresh if x[0] != ckey) | {made}))
                    cur = fresh
                elif not (isinstance(value, cst.Name) and value.value == "None"):
                    cur = {st.forget(ckey) for st in cur}
        return cur

    def _undrop(self, dropped: frozenset[str], names) -> frozenset[str]:
        """``dropped`` without the conditions that mention a rebound name (cached: few distinct sets)."""
        key = (dropped, frozenset(names))
        hit = self._undrop_cache.get(key)
        if hit is None:
            hit = frozenset(k for k in dropped if not _mentions_any(k, names))
            self._undrop_cache[key] = hit
        return hit

    def rebind(self, frame: Frame, heads: Iterable[str], states: set[State], keep_scaled: bool = False) -> set[State]:
        canon = frozenset(self.canon(frame, h) or h for h in heads)
        if not canon:
            return states
        memo = self._mentions_memo
        out = set()
        for st in states:
            if st.assume:
                keep = []
                for x in st.assume:
                    hit = memo.get((x[0], canon))
                    if hit is None:
                        hit = memo[(x[0], canon)] = _mentions_any(x[0], canon)
                    if not hit:
                        keep.append(x)
                assume = st.assume if len(keep) == len(st.assume) else frozenset(keep)
            else:
                assume = st.assume
            scaled = st.scaled if keep_scaled else frozenset(x for x in st.scaled if x[0] not in canon)
            dropped = self._undrop(st.dropped, canon) if st.dropped else st.dropped
            if assume != st.assume or scaled != st.scaled or dropped != st.dropped:
                st = st.replace(assume=assume, scaled=scaled, dropped=dropped)
            out.add(st)
        return out

    def _is_enabled_test(self, frame: Frame, test: cst.BaseExpression) -> bool | None:
        """``S.is_enabled()`` -> True, ``not S.is_enabled()`` -> False, else None."""
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            inner = self._is_enabled_test(frame, test.expression)
            return None if inner is None else not inner
        if (isinstance(test, cst.Call) and not test.args and isinstance(test.func, cst.Attribute)
                and test.func.attr.value == "is_enabled" and self.is_scaler(frame, expr_key(test.func.value))):
            return True
        return None

    def _interesting_conditions(self) -> set[str]:
        """Condition texts tested more than once in the file, or naming a scaler: only those can
        correlate two branches, so only those are remembered on a path."""
        counts: dict[str, int] = {}
        root = Frame(self.m.top, {}, "", (), 0, ())
        for test in self.m.tests:
            for key, _v in self.cond_facts(root, test, True, raw=True):
                counts[key] = counts.get(key, 0) + 1
        return {k for k, n in counts.items() if n > 1}

    def assume(self, frame: Frame, test: cst.BaseExpression, value: bool, states: set[State]) -> set[State]:
        enabled = self._is_enabled_test(frame, test)
        if enabled is not None:
            # the analysis follows an enabled scaler (a disabled one does nothing): the branch
            # taken when ``scaler.is_enabled()`` is false does not exist for it
            return states if enabled == value else set()
        facts = self.cond_facts(frame, test, value)
        if not facts:
            return states
        relevant = self._guards_events(test)
        if relevant:
            self._relevant_keys.update(k for k, _v in facts)
        out = set()
        for st in states:
            ok = True
            add = []
            for k, v in facts:
                if (k, not v) in st.assume:
                    ok = False
                    break
                if (k, v) not in st.assume:
                    add.append((k, v))
            if ok:
                if relevant and st.dropped and not st.approx and any(k in st.dropped for k, _v in add):
                    st = st.replace(approx=True)
                out.add(st.replace(assume=st.assume | frozenset(add)) if add else st)
        return out

    def cond_facts(self, frame: Frame, test: cst.BaseExpression, value: bool, raw: bool = False) -> list[tuple[str, bool]]:
        """What a branch on ``test`` taking ``value`` tells: (condition key, truth) pairs."""
        if isinstance(test, (cst.Name, cst.Attribute)):
            text = dotted_text(test)
            if text is not None:
                if text in ("True", "False", "None"):
                    return []
                if raw:
                    return [(text, value)]
                if text not in self.interesting and not self.is_scaler(frame, text):
                    return []
                return [(self.canon(frame, text) or text, value)]
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            return self.cond_facts(frame, test.expression, not value, raw)
        if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
            op = test.comparisons[0].operator
            right = test.comparisons[0].comparator
            if isinstance(right, cst.Name) and right.value == "None" and isinstance(op, (cst.Is, cst.IsNot)):
                return self.cond_facts(frame, test.left, value if isinstance(op, cst.IsNot) else not value, raw)
        if isinstance(test, cst.BooleanOperation):
            if raw:
                return self.cond_facts(frame, test.left, True, raw) + self.cond_facts(frame, test.right, True, raw)
            if isinstance(test.operator, cst.And) and value:
                return self.cond_facts(frame, test.left, True) + self.cond_facts(frame, test.right, True)
            if isinstance(test.operator, cst.Or) and not value:
                return self.cond_facts(frame, test.left, False) + self.cond_facts(frame, test.right, False)
            return []
        text = self._cond_text.get(test)
        if text is None:
            text = _compact(self.m.code_for(test))
            self._cond_text[test] = text
        if raw:
            return [(text, value)]
        if text not in self.interesting:
            return []
        return [(frame.tag + text if frame.tag else text, value)]

    def widen(self, states: set[State]) -> set[State]:
        states = _merge_flags(states)
        if len(states) <= MAX_STATES:
            return states
        keys = self._relevant_keys
        stripped = _same_dropped({_strip_assume(st, _scaler_like, keys) for st in states})
        if len(stripped) <= MAX_STATES:
            return stripped
        stripped = _same_dropped({_strip_assume(st, None, keys) for st in stripped})
        if len(stripped) <= MAX_STATES:
            return stripped
        return {_join(stripped)}

    # --- loop helpers ----------------------------------------------------------------

    def _over_optimizers(self, frame: Frame, s: cst.For, targets: frozenset[str]) -> bool:
        """A loop whose target is the optimizer a scaler steps or unscales in its body."""
        if not targets:
            return False
        for c in frame.func.calls:
            if s not in c.loops or c.method not in ("step", "unscale_") or not self.is_scaler(frame, c.recv):
                continue
            a = c.arg(0, "optimizer")
            k = expr_key(a.value) if a is not None else None
            if k is not None and _mentions_any(k, targets):
                return True
        return False

    def _next_optimizer(self, st: State, targets: frozenset[str], assigned: frozenset[str]) -> State:
        """Back edge of a loop over optimizers: the next pass's optimizer starts READY; this pass's
        stage moves to ``done`` and its steps stay in the iteration under a renamed key (``opt*``)."""
        def rename(o: str) -> str:
            return o + "*" if not o.endswith("*") and _mentions_any(o, targets) else o

        moved = frozenset(x for x in st.stage if _mentions_any(x[1], targets))
        stage = st.stage - moved
        done = st.done | {(x[0], x[2], x[3]) for x in moved}
        iters = frozenset((x[0], x[1], frozenset(rename(o) for o in x[2]), frozenset(rename(o) for o in x[3]))
                          for x in st.iters)
        assume = frozenset(x for x in st.assume if not _mentions_any(x[0], assigned))
        scaled = frozenset(x for x in st.scaled if x[0] not in assigned)
        return st.replace(stage=stage, done=done, iters=iters, assume=assume, scaled=scaled)

    def _new_iteration(self, st: State) -> State:
        return st.replace(iters=frozenset()) if st.iters else st

    def _next_iteration(self, st: State, assigned: frozenset[str]) -> State:
        assume = frozenset(x for x in st.assume if not _mentions_any(x[0], assigned))
        scaled = frozenset(x for x in st.scaled if x[0] not in assigned)
        fresh = frozenset(x for x in st.fresh if x[2] < self._loop_depth) if st.fresh else st.fresh
        dropped = self._undrop(st.dropped, assigned) if st.dropped else st.dropped
        return st.replace(assume=assume, scaled=scaled, iters=frozenset(), fresh=fresh, handled=False, dropped=dropped)

    def _per_iteration_creates(self, frame: Frame, back: set[State]) -> None:
        """A scaler built in this iteration of the loop (not in a nested one) and stepped or
        updated in it after its nested loops: a new GradScaler every iteration.  Recorded as a
        ``recreate`` observation on the constructor, ``inlined`` when the constructor is in a
        function the loop calls."""
        d = self._loop_depth
        for st in back:
            for key, node, depth in st.fresh:
                if depth != d or st.iteration(key) is None:
                    continue
                create = self._create_obs.get(node)
                if create is None:
                    continue
                okey = ("recreate", node, key)
                obs = self._obs_index.get(okey)
                if obs is None:
                    obs = Observation("recreate", node, create.site, key, None, create.regions, create.func, set(),
                                      inlined=create.func is not frame.func)
                    self._obs_index[okey] = obs
                    self.observations.append(obs)
                obs.states.add(st)

    def _drop_target_stages(self, st: State, targets: frozenset[str]) -> State:
        if not targets or not st.stage:
            return st
        keep = frozenset(x for x in st.stage if not _mentions_any(x[1], targets))
        return st.replace(stage=keep) if keep != st.stage else st

    def _loop_assigned(self, s: cst.CSTNode) -> frozenset[str]:
        hit = self._assigned_in.get(s)
        if hit is None:
            hit = frozenset(_assigned_heads(s.body))  # type: ignore[attr-defined]
            self._assigned_in[s] = hit
        return hit

    def _escape_return(self, frame: Frame, small: cst.Return, states: set[State]) -> None:
        return None

    def _fsdp_bound(self) -> frozenset[str]:
        """Names bound to an FSDP-wrapped module (``model = FSDP(model)``)."""
        out = set()
        for a in self.m.assignments:
            if isinstance(a.value, cst.Call):
                q = self.m.imports.qualify(a.value.func) or dotted_text(a.value.func) or ""
                if q in N.FSDP or q.rsplit(".", 1)[-1] in ("FSDP", "FullyShardedDataParallel"):
                    out.update(t for t in a.targets if t is not None)
        return frozenset(out)

    def _names_of_scalers(self) -> frozenset[str]:
        """Every name component that holds a scaler somewhere in the file (``scaler``,
        ``grad_scaler``, ``_scaler``...), the configured names, and any name mentioning scaler."""
        keys: set[str] = set(self.scalers.module_keys)
        for group in (self.scalers.local_keys, self.scalers.class_attrs):
            for ks in group.values():
                keys |= set(ks)
        keys |= set(self.scalers.extra)
        names = {k.rsplit(".", 1)[-1] for k in keys}
        for texts in self.m.value_texts.values():
            names.update(p for t in texts for p in t.split(".") if "scaler" in p.lower())
        return frozenset(names)

    def _instance_vars(self) -> dict[tuple, object]:
        """Names bound to an instance of a class of this file: (scope, name) -> ClassInfo, the
        scope being the function, None for module names, or the class for ``self.<attr>``."""
        out: dict[tuple, object] = {}
        classes = {c.name: c for c in self.m.classes}
        for a in self.m.assignments:
            v = a.value
            if isinstance(v, cst.Call) and isinstance(v.func, cst.Name) and v.func.value in classes:
                for t in a.targets:
                    if t is None:
                        continue
                    if t.startswith("self.") and owner_class(a.func) is not None:
                        out[(owner_class(a.func), t)] = classes[v.func.value]
                    else:
                        out[(None if a.func.is_module else a.func, t)] = classes[v.func.value]
        return out

    def _stored_params(self, cls) -> dict[str, str]:
        """``self.<attr> = <param>`` in ``cls.__init__``: param -> attr (what the object keeps)."""
        hit = self._stored.get(id(cls))
        if hit is None:
            hit = {}
            init = self._method(cls, "__init__")
            if init is not None:
                for a in self.m.assignments:
                    if a.func is init and isinstance(a.value, cst.Name) and a.value.value in init.params:
                        for t in a.targets:
                            if t is not None and t.startswith("self.") and t.count(".") == 1:
                                hit[a.value.value] = t[5:]
            self._stored[id(cls)] = hit
        return hit

    def _constructor_aliases(self, cls, call: cst.Call) -> list[tuple[str, cst.BaseExpression]]:
        """(attr, argument) pairs: the object built by ``call`` keeps ``argument`` as ``attr``."""
        stored = self._stored_params(cls)
        if not stored:
            return []
        init = self._method(cls, "__init__")
        params = [p for p in init.params[1:] if p not in init.kwonly]  # type: ignore[union-attr]
        out = []
        positional = [a for a in call.args if a.keyword is None and not a.star]
        for p, a in zip(params, positional):
            if p in stored:
                out.append((stored[p], a.value))
        for a in call.args:
            if a.keyword is not None and a.keyword.value in stored:
                out.append((stored[a.keyword.value], a.value))
        return out

    def _class_aliases(self) -> dict[object, dict[str, str]]:
        """``self.w = Wrapper(self.scaler)`` where Wrapper keeps it as ``self.grad_scaler``:
        per class, ``self.w.grad_scaler`` -> ``self.scaler`` (both relative to ``self``)."""
        out: dict[object, dict[str, str]] = {}
        for (scope, target), cls in self._instances.items():
            if not isinstance(target, str) or not target.startswith("self."):
                continue
            for a in self.m.assignments:
                if owner_class(a.func) is not scope or target not in a.targets or not isinstance(a.value, cst.Call):
                    continue
                for attr, arg in self._constructor_aliases(cls, a.value):
                    src = expr_key(arg)
                    if src is not None and src.startswith("self."):
                        out.setdefault(scope, {})[f"{target}.{attr}"] = src
        return out

    def _optimizer_texts(self) -> set[str]:
        out: set[str] = set()
        for c in self.m.calls:
            if c.method in ("step", "unscale_") and c.recv is not None and self.scalers.is_scaler(c.func, c.recv):
                a = c.arg(0, "optimizer")
                if a is not None:
                    k = expr_key(a.value)
                    if k is not None:
                        out.add(k)
        for a in self.m.assignments:
            if isinstance(a.value, cst.Call):
                q = self.m.imports.qualify(a.value.func)
                if N.is_optimizer_ctor(q):
                    out.update(t for t in a.targets if t is not None)
        return out


_GRAD_EDITS = T.GRAD_EDIT_METHODS
_GRAD_EDIT_FUNCTIONS = T.GRAD_EDIT_FUNCTIONS
# reductions that read a gradient's magnitude (``p.grad.pow(2).sum()``, ``p.grad.abs().max()``)
_GRAD_READS = T.GRAD_READ_METHODS
_GRAD_READ_FUNCTIONS = T.GRAD_READ_FUNCTIONS
# element tests whose result does not depend on the scale (``p.grad.isnan().sum()``)
_PREDICATES = T.GRAD_PREDICATES
_EVENT_CALLS = frozenset({
    "scale", "unscale_", "step", "update", "backward", "zero_grad", "norm", "clip_grad_norm_", "clip_grad_value_",
    "clip_grads_with_norm_", "get_total_norm", "load_state_dict", "cast",
})
_BACKWARD_LIKE = T.BACKWARD_LIKE
_CASTS = frozenset({"typing.cast", "typing_extensions.cast"})
_PURE_MODULES = frozenset({"math", "logging", "numpy", "np", "time", "os", "json", "warnings", "random", "itertools"})
_HEAD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _scaler_like(key: str) -> bool:
    k = key.lower()
    return "scal" in k or "amp" in k or "fp16" in k or "half" in k or "precision" in k or "mixed" in k


def _merge_flags(states: set[State]) -> set[State]:
    """Merge states that differ only in how they were reached: the facts hold exactly when one
    of them is exact (``approx``/``handled``: all), and a forgotten condition stays forgotten
    (``dropped``: union)."""
    if len(states) < 2 or not any(st.approx or st.handled or st.dropped for st in states):
        return states
    groups: dict[tuple, list[State]] = {}
    for st in states:
        key = (st.assume, st.stage, st.known, st.grads, st.sbw, st.plain, st.scaled, st.iters, st.zeroed, st.fresh,
               st.lost, st.bypass, st.done)
        groups.setdefault(key, []).append(st)
    if len(groups) == len(states):
        return states
    out = set()
    for group in groups.values():
        if len(group) == 1:
            out.add(group[0])
            continue
        out.add(group[0].replace(
            approx=all(st.approx for st in group),
            handled=all(st.handled for st in group),
            dropped=frozenset().union(*(st.dropped for st in group)),
        ))
    return out


def _same_dropped(states: set[State]) -> set[State]:
    """Give every widened state the union of the forgotten conditions, so that states which now
    differ only in which conditions they forgot merge."""
    union: frozenset[str] = frozenset().union(*(st.dropped for st in states))
    return {st if st.dropped == union else st.replace(dropped=union) for st in states}


def _strip_assume(st: State, keep, relevant: set[str]) -> State:
    assume = frozenset(a for a in st.assume if keep is not None and keep(a[0]))
    if assume == st.assume:
        return st
    forgot = {a[0] for a in st.assume - assume if a[0] in relevant}
    return st.replace(assume=assume, dropped=st.dropped | forgot) if forgot else st.replace(assume=assume)


def _scalers_in(st: State) -> set[str]:
    out = {x[0] for x in st.stage} | set(st.known) | {x[0] for x in st.grads} | {x[0] for x in st.sbw}
    out |= {x[0] for x in st.iters}
    return out


def _mentions_any(key: str, names: Iterable[str]) -> bool:
    for n in names:
        if key == n or key.startswith(n + ".") or key.startswith(n + "["):
            return True
        if n in key and re.search(r"(?<![\w.])" + re.escape(n) + r"(?![\w])", key):
            return True
    return False


def _join(states: set[State]) -> State:
    """One state with only the facts every state agrees on."""
    it = iter(states)
    first = next(it)
    stage, known, grads, sbw, plain = first.stage, first.known, first.grads, first.sbw, first.plain
    scaled, iters = first.scaled, first.iters
    zeroed, fresh, lost, handled, bypass = first.zeroed, first.fresh, first.lost, first.handled, first.bypass
    approx, dropped = first.approx, first.dropped | {a[0] for a in first.assume}
    done = first.done
    for st in it:
        done &= st.done
        bypass |= st.bypass
        approx = approx or st.approx
        dropped |= st.dropped | {a[0] for a in st.assume}
        zeroed &= st.zeroed
        fresh &= st.fresh
        lost |= st.lost
        handled = handled or st.handled
        stage &= st.stage
        known &= st.known
        grads &= st.grads
        sbw &= st.sbw
        plain &= st.plain
        scaled &= st.scaled
        iters &= st.iters
    # a scaler is only known (its optimizers not in ``stage`` READY) when every state agrees on
    # its whole stage; "no scaled backward" only holds when every state agrees on its backwards
    for st in states:
        for x in st.stage - stage:
            known -= {x[0]}
        for x in st.sbw - sbw:
            lost |= {x[0]}
    for st in states:
        for x in st.done - done:
            known -= {x[0]}
    return State(frozenset(), stage, known, grads, sbw, plain, scaled, iters, zeroed, fresh, lost, handled, approx,
                 bypass, dropped, done)


def _target_heads(node: cst.CSTNode) -> frozenset[str]:
    out: set[str] = set()
    if isinstance(node, (cst.Name, cst.Attribute, cst.Subscript)):
        k = expr_key(node)  # type: ignore[arg-type]
        if k is not None:
            out.add(k)
    elif isinstance(node, (cst.Tuple, cst.List)):
        for el in node.elements:
            out |= _target_heads(el.value)
    elif isinstance(node, cst.StarredElement):
        out |= _target_heads(node.value)
    return frozenset(out)


def _assigned_heads(node: cst.CSTNode) -> set[str]:
    """Names and dotted targets assigned anywhere below ``node`` (not in nested defs)."""
    out: set[str] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        if isinstance(n, cst.AssignTarget):
            out |= _target_heads(n.target)
        elif isinstance(n, (cst.AugAssign, cst.AnnAssign)):
            out |= _target_heads(n.target)
        elif isinstance(n, cst.For):
            out |= _target_heads(n.target)
        elif isinstance(n, cst.NamedExpr):
            out |= _target_heads(n.target)
        elif isinstance(n, cst.AsName):
            out |= _target_heads(n.name)
        elif isinstance(n, cst.Call):
            # a method call may mutate its receiver: ``i += 1`` style counters are caught above;
            # ``it.next()`` style mutation is not tracked.
            pass
        for f in _child_nodes(n):
            stack.append(f)
    return out


def _child_nodes(n: cst.CSTNode):
    from .syntax import children

    return children(n)


_FLOW_METHODS = frozenset({"scale", "unscale_", "step", "update", "backward", "zero_grad", "manual_backward"})


def _arm_calls(module: cst.Module) -> dict[cst.CSTNode, list[cst.CSTNode]]:
    """Test expression of every if / while / conditional expression -> the calls in its arms."""
    out: dict[cst.CSTNode, list[cst.CSTNode]] = {}
    for n in _walk(module):
        if isinstance(n, (cst.If, cst.IfExp, cst.While)):
            parts = [n.body] + ([n.orelse] if n.orelse is not None else [])
            out[n.test] = [c for p in parts for c in _walk(p) if isinstance(c, cst.Call)]
    return out


def _walk(node: cst.CSTNode):
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(_child_nodes(n))


_AMP_SWITCH = re.compile(r"scal|amp|fp16|float16|half|precision|mixed|autocast|cuda|enabled", re.I)


def _amp_switch(text: str) -> bool:
    return bool(_AMP_SWITCH.search(text))


def _exclusive_arms(module: cst.Module):
    """For every call under an if/else arm: its path of (branch id, test, arm index), the calls of
    every arm, and the number of arms of every branch."""
    arm_calls: dict[tuple[int, int], set[cst.CSTNode]] = {}
    arms_of: dict[int, int] = {}
    paths: dict[cst.CSTNode, tuple[tuple[int, cst.CSTNode, int], ...]] = {}
    stack: list[tuple[cst.CSTNode, tuple[tuple[int, cst.CSTNode, int], ...]]] = [(module, ())]
    while stack:
        n, path = stack.pop()
        if isinstance(n, cst.Call) and path:
            paths[n] = path
            for owner, _test, i in path:
                arm_calls.setdefault((owner, i), set()).add(n)
        if isinstance(n, (cst.If, cst.IfExp)):
            stack.append((n.test, path))
            test = n.test
            arms = [n.body] + ([n.orelse] if n.orelse is not None else [])
        elif isinstance(n, cst.Match):
            stack.append((n.subject, path))
            test = n.subject
            arms = list(n.cases)
        else:
            for c in _child_nodes(n):
                stack.append((c, path))
            continue
        arms_of[id(n)] = len(arms)
        for i, arm in enumerate(arms):
            stack.append((arm, path + ((id(n), test, i),)))
    return paths, arm_calls, arms_of


def _receiver_chain(node: cst.CSTNode | None):
    """``node`` and its receivers: ``p.grad.abs().max`` -> the call, ``p.grad.abs``, ... ``p``."""
    n = node
    while n is not None:
        yield n
        if isinstance(n, (cst.Attribute, cst.Subscript)):
            n = n.value
        elif isinstance(n, cst.Call):
            n = n.func
        else:
            return


def _mentions_grad(node: cst.CSTNode | None) -> bool:
    """``p.grad``, ``p.grad.data``, ``p.grad.detach()`` ... : the expression reads a ``.grad``."""
    return any(isinstance(n, cst.Attribute) and n.attr.value == "grad" for n in _receiver_chain(node))


def _predicate_chain(node: cst.CSTNode | None) -> bool:
    """The method chain on a ``.grad`` goes through an element test (``isnan``, ``eq`` ...)."""
    return any(isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value in _PREDICATES
               for n in _receiver_chain(node))


def grad_use(site: CallSite) -> str:
    """What a ``clip`` observation does to the gradients: "clip" (a clip function, FSDP's
    ``clip_grad_norm_``), "edit" (``p.grad.clamp_()``, ``torch.nan_to_num(p.grad)``) or "read"
    (a norm or another magnitude of the gradients)."""
    if site.qual in N.CLIP_FUNCTIONS and not site.qual.endswith("get_total_norm") or site.method == "clip_grad_norm_":
        return "clip"
    if site.method in _GRAD_EDITS or site.qual in _GRAD_EDIT_FUNCTIONS:
        return "edit"
    return "read"


def _compact(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _body(node: cst.CSTNode) -> list[cst.CSTNode]:
    if isinstance(node, cst.IndentedBlock):
        return list(node.body)
    if isinstance(node, cst.SimpleStatementSuite):
        return [node]
    return []
