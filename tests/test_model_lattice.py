"""The typestate lattice (amplint/model/flow/state.py), property-tested.

``join`` is the least upper bound of the order ``leq``: commutative, associative, idempotent, an
upper bound of both arguments and below every other upper bound that the generators reach;
``widen`` keeps at most ``MAX_STATES`` states and every input state is below one of them (the
loop fixpoint depends on it)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

import amplint.model.flow  # noqa: F401 - registers the monitors
from amplint.model.flow.state import (
    CLEAN, IMPLIED, MAX_STATES, SCALED, STEPPED, UNSCALED, UNSCALED_GRADS, PathFacts, ScalerFacts, State,
    covered, join, join_scaler, leq, leq_scaler, widen,
)

NODES = st.sampled_from(["n1", "n2", "n3"])  # call nodes only need identity
OPTS = st.sampled_from(["opt", "opt_d", "opt_g"])
SCALERS = st.sampled_from(["scaler", "self.scaler"])
CONDS = st.sampled_from(["use_amp", "args.clip", "rank0"])


@st.composite
def scaler_facts(draw):
    stages = draw(st.frozensets(st.tuples(OPTS, st.sampled_from([UNSCALED, STEPPED]), NODES), max_size=2))
    grads = draw(st.none() | st.tuples(st.sampled_from([SCALED, UNSCALED_GRADS, CLEAN, IMPLIED]), NODES))
    iters = draw(st.none() | st.tuples(st.integers(0, 2), st.frozensets(OPTS, max_size=2), st.frozensets(OPTS, max_size=2)))
    return ScalerFacts(
        ready=draw(st.booleans()), stages=stages, grads=grads, sbw=draw(st.frozensets(NODES, max_size=2)),
        exact=draw(st.booleans()), iters=iters,
        done=draw(st.frozensets(st.tuples(st.sampled_from([UNSCALED, STEPPED]), NODES), max_size=1)),
    )


@st.composite
def path_facts(draw):
    return PathFacts(
        assume=draw(st.frozensets(st.tuples(CONDS, st.booleans()), max_size=2)),
        scaled=draw(st.frozensets(st.tuples(st.sampled_from(["loss_s", "out"]), SCALERS), max_size=1)),
        plain=draw(st.frozensets(NODES, max_size=1)),
        handled=draw(st.booleans()), approx=draw(st.booleans()),
        dropped=draw(st.frozensets(CONDS, max_size=1)),
    )


@st.composite
def states(draw):
    items = draw(st.dictionaries(SCALERS, scaler_facts(), max_size=2))
    base = State(draw(path_facts()))
    for k, f in sorted(items.items()):
        base = base.with_facts(k, f)
    return base


def same_facts(a: State, b: State) -> bool:
    return leq(a, b) and leq(b, a)


@settings(max_examples=300, deadline=None)
@given(scaler_facts(), scaler_facts())
def test_scaler_join_is_an_upper_bound_and_commutes(a, b):
    j = join_scaler(a, b)
    assert leq_scaler(a, j) and leq_scaler(b, j)
    assert join_scaler(b, a) == j
    assert join_scaler(a, a) == a


@settings(max_examples=300, deadline=None)
@given(scaler_facts(), scaler_facts(), scaler_facts())
def test_scaler_join_is_associative_and_least(a, b, c):
    assert join_scaler(join_scaler(a, b), c) == join_scaler(a, join_scaler(b, c))
    if leq_scaler(a, c) and leq_scaler(b, c):
        assert leq_scaler(join_scaler(a, b), c)


@settings(max_examples=300, deadline=None)
@given(states(), states())
def test_join_is_an_upper_bound_commutes_and_is_idempotent(a, b):
    j = join(a, b)
    assert leq(a, j) and leq(b, j)
    assert same_facts(join(b, a), j)
    assert join(a, a) == a


@settings(max_examples=200, deadline=None)
@given(states(), states(), states())
def test_join_is_associative_and_least(a, b, c):
    assert same_facts(join(join(a, b), c), join(a, join(b, c)))
    if leq(a, c) and leq(b, c):
        assert leq(join(a, b), c)


@settings(max_examples=200, deadline=None)
@given(states(), states(), states())
def test_leq_is_a_preorder(a, b, c):
    assert leq(a, a)
    if leq(a, b) and leq(b, c):
        assert leq(a, c)


@settings(max_examples=30, deadline=None)
@given(st.sets(states(), min_size=1, max_size=MAX_STATES + 30))
def test_widen_is_bounded_and_above_its_input(states_in):
    out = widen(set(states_in), keep_key=lambda k: k == "use_amp", relevant=frozenset({"use_amp", "args.clip"}))
    assert 1 <= len(out) <= max(MAX_STATES, 1)
    assert covered(set(states_in), out)


@settings(max_examples=30, deadline=None)
@given(st.sets(states(), min_size=1, max_size=MAX_STATES + 30))
def test_widen_with_preferred_conditions_is_bounded_and_above_its_input(states_in):
    out = widen(set(states_in), keep_key=lambda k: k == "use_amp", relevant=frozenset({"use_amp", "args.clip"}),
                prefer=lambda k: k == "args.clip")
    assert 1 <= len(out) <= max(MAX_STATES, 1)
    assert covered(set(states_in), out)


@settings(max_examples=30, deadline=None)
@given(st.sets(states(), min_size=1, max_size=40), st.integers(min_value=1, max_value=12))
def test_widen_with_a_lower_cap_is_bounded_by_it_and_above_its_input(states_in, cap):
    out = widen(set(states_in), keep_key=lambda k: k == "use_amp", relevant=frozenset({"use_amp", "args.clip"}), cap=cap)
    assert 1 <= len(out) <= cap
    assert covered(set(states_in), out)


def test_the_state_cap_shrinks_only_in_functions_with_more_protocol_calls_than_training_code():
    from amplint.model.flow.interpret import MANY_PROTOCOL_CALLS, state_cap

    assert state_cap(0) == state_cap(MANY_PROTOCOL_CALLS) == MAX_STATES
    caps = [state_cap(n) for n in range(MANY_PROTOCOL_CALLS, 20 * MANY_PROTOCOL_CALLS, 50)]
    assert caps == sorted(caps, reverse=True) and caps[-1] == 8
    # the work per statement (states times calls) stays linear in the calls
    assert all(state_cap(n) * n <= MAX_STATES * MANY_PROTOCOL_CALLS for n in range(MANY_PROTOCOL_CALLS, 700))


def test_widen_forgets_unrelated_conditions_before_the_preferred_ones():
    """Over the bound, the conditions neither AMP switches nor preferred (those choosing
    between arms with protocol events) are forgotten first; a preferred one stays known, and is
    not marked as forgotten, while the bound still holds."""
    unrelated = [f"flag{i}" for i in range(7)]  # 128 paths: over MAX_STATES
    facts = ScalerFacts(ready=True, stages=frozenset(), grads=(SCALED, "n1"), sbw=frozenset({"n1"}), exact=True,
                        iters=None, done=frozenset())
    states_in = set()
    for bits in range(2 ** len(unrelated)):
        assume = {(k, bool(bits >> i & 1)) for i, k in enumerate(unrelated)} | {("FLAGS.torch", True)}
        states_in.add(State(PathFacts(assume=frozenset(assume))).with_facts("scaler", facts))
    relevant = frozenset(unrelated) | {"FLAGS.torch"}
    out = widen(states_in, keep_key=lambda k: "amp" in k, relevant=relevant, prefer=lambda k: k == "FLAGS.torch")
    assert len(out) == 1
    (st_out,) = out
    assert st_out.path.assume == {("FLAGS.torch", True)}
    assert "FLAGS.torch" not in st_out.path.dropped and set(unrelated) <= st_out.path.dropped
    # without the preference, the branch outcome is forgotten with the others
    (plain,) = widen(states_in, keep_key=lambda k: "amp" in k, relevant=relevant)
    assert "FLAGS.torch" in plain.path.dropped


def test_ready_facts_after_the_constructor_are_below_no_facts():
    from amplint.model.flow.state import FRESH, LOST, NOFACTS

    assert leq_scaler(FRESH, NOFACTS) and not leq_scaler(NOFACTS, FRESH)
    assert leq_scaler(NOFACTS, LOST) and leq_scaler(FRESH, LOST)
