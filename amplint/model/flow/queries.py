"""Named queries: the sequencing facts rules read, computed from the flow's observations.

Every query ignores speculative paths where a rule needs exact ones (see
:attr:`.state.State.speculative`) and observations made in a loop that did not converge.
Each returns plain data (nodes, call sites, keys); rules only word findings and build fixes.
"""

from __future__ import annotations

from .. import class_protocol
from ..syntax import expr_key
from .eval_queries import eval_context, in_eval_code, scaler_calls_in_eval
from .grad_queries import clips_on_scaled_grads, helper_clips_on_scaled_grads
from .monitors import value
from .observed import _obs, display_key, source_order
from .state import CLEAN, READY, SCALED, STEPPED, UNSCALED, UNSCALED_GRADS

# --- AMP001 ------------------------------------------------------------------------------------


def steps_reaching_step_without_update(model) -> list:
    """Step call nodes from which the next step (or ``unscale_``) of the same optimizer is
    reached with no ``update()`` in between, in source order of discovery."""
    steps: dict[int, object] = {}
    for obs in _obs(model, "step", every=True):
        for st in obs.states:
            if st.path.approx:
                continue  # (a path that skipped a loop handing the scaler to unseen code)
            hit = st.facts(obs.scaler).stage_of(obs.opt)
            if hit is not None and hit[0] == STEPPED and hit[1] is not None:
                steps.setdefault(id(hit[1]), hit[1])
    # ``unscale_(opt)`` before the next step meets the stepped optimizer first. In the same
    # iteration that is AMP005's unscale-after-step; across iterations, this step's missing update.
    for obs in _obs(model, "unscale", every=True):
        for st in obs.states:
            if st.path.approx:
                continue
            f = st.facts(obs.scaler)
            hit = f.stage_of(obs.opt)
            if hit is None or hit[0] != STEPPED or hit[1] is None:
                continue
            if f.iters is None or obs.opt not in f.iters[2]:
                steps.setdefault(id(hit[1]), hit[1])
    # a scaler built in this very iteration: its missing update shows at the loop's back edge
    rebuilt = {obs.scaler for obs in _obs(model, "recreate")}
    for obs in _obs(model, "backedge", every=True) if rebuilt else ():
        for st in obs.states:
            fresh = {x[0] for x in value(st, "fresh")} & rebuilt
            for s in fresh:
                for _o, kind, node in st.facts(s).stages:
                    if kind == STEPPED:
                        steps.setdefault(id(node), node)
    for node in never_updated_steps(model):
        steps.setdefault(id(node), node)
    return [n for n in steps.values() if model.owns(n)]


def never_updated_steps(model) -> list:
    """Steps of a scaler that is never updated anywhere in the file and never leaves it (a
    class that owns its scaler and whose training-step method has no loop), or that the class
    running them never updates over its MRO (:func:`..class_protocol.never_updates`)."""
    out = []
    updated = {c.recv.rsplit(".", 1)[-1] for c in model.calls if c.method == "update" and c.recv is not None}
    for site in model.calls:
        if site.method != "step" or site.recv is None or site.in_lambda or not model.is_scaler(site.func, site.recv):
            continue
        if class_protocol.never_updates(model, site) or site.recv.rsplit(".", 1)[-1] not in updated and (
                model.scalers.owned(site.func, site.recv) and not model.scalers.escapes(site.recv)):
            out.append(site.node)
    return out


# --- AMP003 ------------------------------------------------------------------------------------


def optimizer_steps_on_scaled_grads(model) -> list:
    """``(opt_step observation, scaler key, why)``: ``optimizer.step()`` on gradients a scaler
    scaled (why ``scaled``), or on gradients ``unscale_`` unscaled for that optimizer, skipping
    the scaler's inf check (why ``unchecked``). Conditional AMP (the non-AMP arm) and wrappers
    that step through the scaler themselves are left out."""
    out = []
    seen: set[int] = set()
    moved_by = None  # scaler step/unscale node -> the optimizer it was for
    for obs in _obs(model, "opt_step"):
        if obs.site is None or id(obs.node) in seen:
            continue
        hits = set()
        for st in obs.states:
            if st.path.plain or st.speculative:
                continue  # an unscaled backward ran too: this optimizer may be a non-AMP one
            scaled = [k for k, f in st.scalers if f.grads is not None and f.grads[0] == SCALED]
            if scaled:
                hits.add((scaled[0], "scaled"))
                continue
            hit = None
            # ``scaler.step(opt_a)`` (or ``unscale_(opt_a)``) handled only opt_a's parameters:
            # another optimizer stepped directly after it still sees scaled gradients
            if moved_by is None:
                moved_by = {id(o.node): o.opt for o in _obs(model, "step", "unscale", every=True) if o.opt}
            for k, f in st.scalers:
                if f.grads is None or f.grads[0] not in (CLEAN, UNSCALED_GRADS) or obs.opt is None:
                    continue
                other = moved_by.get(id(f.grads[1]))
                stage = f.stage_of(obs.opt)
                if other is not None and other != obs.opt and (stage is None or stage[0] == READY) and (
                        f.iters is None or obs.opt not in f.iters[2]) and not _handed_on(model, obs):
                    hit = (k, "scaled")
                    break
            if hit is None:
                for k, f in st.scalers:
                    stage = f.stage_of(obs.opt)
                    if stage is not None and stage[0] == UNSCALED and f.grads is not None and f.grads[0] != CLEAN:
                        hit = (k, "unchecked")
                        break
            if hit is not None:
                hits.add(hit)
        # the same answer whatever order the states come in: scaled gradients first
        hit = min(hits, key=lambda h: (h[1] != "scaled", h[0])) if hits else None
        if hit is None or conditional_amp(model, obs.node) or model.optimizer_steps_through(obs.site, hit[0]):
            continue
        seen.add(id(obs.node))
        out.append((obs, hit[0], hit[1]))
    return out


def _handed_on(model, obs) -> bool:
    """The optimizer stepped directly was handed to other code earlier in the function
    (``pfc.forward_backward(feats, labels, self.pfc_optimizer)``; not a scaler's ``unscale_``):
    that code runs the backward of its own parameters, which the scaled loss need not reach."""
    text = obs.site.recv
    return text is not None and any(
        c.order < obs.site.order and model.events.of(c).kind == "call" and any(expr_key(a.value) == text for a in c.node.args)
        for c in obs.site.func.calls if c is not obs.site)


def conditional_amp(model, node) -> bool:
    """``node`` sits in one arm of an if/else on an AMP switch whose other arm uses the scaler:
    the arms are the AMP and the non-AMP variant of one step."""
    for alt in model.flow.alternatives(node, amp_conditions=True):
        if model.is_scaler_call(alt) or model.is_scaled_backward(alt):
            return True
    return False


# --- AMP004 / AMP009 ---------------------------------------------------------------------------


def plain_backwards_into_steps(model, partial: bool):
    """Plain ``x.backward()`` calls whose gradients a ``S.step(O)`` consumes: ``(backward site,
    scaler key, step observation)``. ``partial=False``: no scaled backward of S ran since its last
    step (AMP004); ``partial=True``: one did too (AMP009)."""
    scaler_opts = {o.opt for o in _obs(model, "step", every=True)}
    disabled = model.disabled_scalers()
    plain_steps: dict = {}
    for o in _obs(model, "opt_step", every=True):
        plain_steps.setdefault(o.func, set()).add(o.opt)
    seen: set[int] = set()
    for obs in _obs(model, "step", every=True):
        if display_key(obs.scaler) in disabled:
            continue  # ``GradScaler(enabled=False)`` steps the optimizer as it is
        for st in obs.states:
            if not st.path.plain or st.speculative:
                continue
            f = st.facts(obs.scaler)
            if bool(f.sbw) != partial:
                continue
            if not partial and not f.exact:
                continue
            for node in st.path.plain:
                if id(node) in seen:
                    continue
                site = model.call_of.get(node)
                if site is None or not model.tensor_backward(site):
                    continue
                if conditional_amp(model, node) and not (
                        site.arms and obs.site is not None and site.arms[-1] in obs.site.arms
                        and not model.flow.has_enabled_flag(obs.site.func, obs.site.recv_node)):
                    # the non-AMP arm of a step, unless an always-enabled scaler steps in that very arm
                    continue
                if model.sometimes_scaled(site) or any(r.kind == "no_grad" for r in site.regions):
                    continue
                if (plain_steps.get(site.func, set()) | plain_steps.get(obs.func, set())) - scaler_opts:
                    continue  # an optimizer stepped without the scaler may own these gradients
                seen.add(id(node))
                yield site, obs.scaler, obs


def plain_fp16_backwards_beside_unused_scaler(model):
    """``(backward site, scaler as written)``: a float16 autocast loss back-propagated unscaled in a
    function that has an enabled GradScaler of its own (built there, ``self.<attr>``, or a module
    global no other module imports) which scales nothing anywhere in the file: the scaler was made
    for this backward and never used."""
    if any(c.method in ("scale", "step") and model.is_scaler(c.func, c.recv) for c in model.calls if c.recv is not None):
        return  # the scaler is in use: the step-based check decides
    for site in model.calls:
        if site.in_lambda or site.method != "backward" or site.recv_node is None or not model.tensor_backward(site):
            continue
        scalers = [k for k in model.scalers.keys_in(site.func) if model.scalers.owned(site.func, k)
                   and k not in model.disabled_scalers()]
        if len(scalers) != 1 or model.scalers.escapes(scalers[0]) or (
                model.project is not None and model.project.name_imported(scalers[0])):
            continue
        r = model.dtypes.fp16_source(site.func, site.recv_node, site.order, arms=site.arms)
        if r is not None and not model.dtypes.disabled_here(site.arms, r):
            yield site, scalers[0]


# --- AMP005 ------------------------------------------------------------------------------------


def unscale_after_unscale(model) -> list:
    """``(unscale observation, UNSCALED|STEPPED, the earlier node)``: an ``unscale_`` that meets its
    optimizer already unscaled (no update between) or stepped in the same iteration."""
    found: dict[int, tuple] = {}
    for obs in _obs(model, "unscale"):
        if obs.site is None or id(obs.node) in found or model.guards_stage(obs.site.func):
            continue
        alts = model.flow.alternatives(obs.node)
        hits = set()
        for st in obs.states:
            if st.speculative:
                continue
            f = st.facts(obs.scaler)
            hit = f.stage_of(obs.opt)
            if hit is None or hit[1] is None or hit[1] in alts:
                continue
            if hit[0] == UNSCALED or (hit[0] == STEPPED and f.iters is not None and obs.opt in f.iters[2]):
                hits.add(hit)
        if hits:
            # the same answer whatever order the states come in: an earlier unscale_ first
            stage, prior = min(hits, key=lambda h: (h[0] != UNSCALED, source_order(model, h[1])))
            found[id(obs.node)] = (obs, stage, prior)
    return list(found.values())


# --- AMP006 / AMP007 ---------------------------------------------------------------------------


def updates_without_step(model) -> list:
    """``(update observation, bypassing steps)``: updates that some exact path (or one through an
    exception handler) reaches with every optimizer READY (no step or ``unscale_`` since the last update), not in evaluation code
    (AMP201's). ``bypassing steps``: the ``optimizer.step()`` calls that consumed the scaled
    gradients on those paths instead (AMP003's findings, the cause)."""
    out = []
    seen: set[int] = set()
    for obs in _obs(model, "update"):
        site = obs.site
        if site is None or id(obs.node) in seen or site.node.args:
            continue
        if eval_context(obs, model) is not None and _own_evaluation(obs):
            continue  # an update written in evaluation code: AMP201's
        # (a path through an ``except`` handler counts: the exception may come before the step,
        # and an update after the handler then meets no step, ``No inf checks were recorded``)
        if not any(st.facts(obs.scaler).all_ready and not st.path.approx for st in obs.states) \
                and not _step_skipped_here(obs):
            continue
        seen.add(id(obs.node))
        bypass = {n for st in obs.states for s, n in value(st, "bypass") if s == obs.scaler}
        out.append((obs, sorted(bypass, key=lambda n: source_order(model, n))))
    return out


def _own_evaluation(obs) -> bool:
    """The evaluation region around an observation is its own function's (the call is written
    in evaluation code), not only a caller's (a shared ``_run_batch(train=False)`` that updates
    with no step, called from a ``@torch.no_grad()`` validation: an update without a step too)."""
    own = obs.site.regions
    if obs.grad_disabled is not None and any(r is obs.grad_disabled for r in own):
        return True
    return any(r.kind in ("eval", "eval_name") and not r.has_backward for r in own)


def _step_skipped_here(obs) -> bool:
    """A wrapper that steps on some paths and not on others, and updates on both."""
    stepped = skipped = False
    for st in obs.states:
        f = st.facts(obs.scaler)
        if st.speculative or not f.exact:
            continue
        if any(kind == STEPPED for _o, kind, _n in f.stages):
            stepped = True
        elif not f.stages and not f.ready and f.sbw:
            skipped = True
    return stepped and skipped


def second_updates(model) -> list:
    """``(update node, optimizers stepped after it, the later update)``: an update followed in the
    same iteration by steps of other optimizers and another update; the node is the earlier
    update (in any module: the rule keeps this module's). The earlier one is the update whose
    iteration facts lead to the later one's: it ran after stepping exactly the optimizers the
    later update finds stepped before the previous update (itself in a loop over optimizers)."""
    updates = [o for o in _obs(model, "update", every=True) if o.site is not None and eval_context(o, model) is None]
    out = []
    seen: set[int] = set()
    for obs in updates:
        for st in obs.states:
            it = st.facts(obs.scaler).iters
            if it is None or st.speculative:
                continue
            n, prev, cur = it
            if not (n >= 1 and prev and cur - prev):
                continue
            found = [e for e in updates if e.scaler == obs.scaler and any(
                it2 is not None and it2[2] == prev and it2[0] in (n - 1, n)
                for it2 in (s2.facts(e.scaler).iters for s2 in e.states))]
            # (none: the same update in the previous pass of a loop over optimizers)
            for earlier in found or [obs]:
                if id(earlier.node) not in seen:
                    seen.add(id(earlier.node))
                    out.append((earlier.node, sorted(cur - prev), obs))
    return out


# --- AMP008 / AMP012 ---------------------------------------------------------------------------


def recreated_scalers(model) -> list:
    out = []
    seen: set[int] = set()
    for obs in _obs(model, "recreate"):
        if obs.site is None or id(obs.node) in seen:
            continue
        seen.add(id(obs.node))
        out.append(obs)
    return out


def zero_grads_before_step(model) -> list:
    """``(zero_grad node, scaler key, optimizer key)``: a ``zero_grad()`` that wiped the gradients of
    a scaled backward before that scaler steps the optimizer it clears."""
    steps = _obs(model, "step", every=True)
    opts_of: dict[str, set] = {}
    for obs in steps:
        opts_of.setdefault(obs.scaler, set()).add(obs.opt)
    out = []
    seen: set[int] = set()
    for obs in steps:
        for st in obs.states:
            if st.speculative:
                continue
            for s, node, rkey in value(st, "zeroed"):
                if s != obs.scaler or id(node) in seen:
                    continue
                site = model.call_of.get(node)
                if site is None or not (_same_optimizer(model, site, rkey, obs.opt, opts_of[obs.scaler])
                                        or _element_of(model, obs, rkey)):
                    continue
                seen.add(id(node))
                out.append((node, obs.scaler, obs.opt))
    return out


def _element_of(model, step_obs, rkey: str | None) -> bool:
    """``opts["encoder"].zero_grad()`` and a step of the loop variable over that container
    (``for opt in opts.values(): scaler.step(opt)``): every element is stepped, that one too."""
    if not rkey or not rkey.endswith("]") or step_obs.site is None or step_obs.opt is None:
        return False
    container = display_key(rkey).split("[", 1)[0]
    name = display_key(step_obs.opt)
    model = getattr(step_obs.site.func, "owner_model", None) or model  # (an inherited template's loop)
    for b in model.bindings:
        if b.kind == "for" and b.name == name and b.func is step_obs.site.func and b.value is not None:
            it = model.code_for(b.value)
            for suffix in (".values()", ".items()", ""):
                if it == container + suffix:
                    return True
    return False


def _same_optimizer(model, site, rkey, opt, stepped: set) -> bool:
    recv = site.recv
    if recv is None:
        return False
    if recv in model.events.opt_texts or "opt" in recv.rsplit(".", 1)[-1].lower():
        return rkey == opt
    # ``model.zero_grad()``: only when the scaler steps one optimizer
    return len(stepped) == 1 and not any(o is None or o.startswith("?") for o in stepped)


__all__ = ["clips_on_scaled_grads", "display_key", "eval_context", "helper_clips_on_scaled_grads", "in_eval_code",
           "scaler_calls_in_eval"]
