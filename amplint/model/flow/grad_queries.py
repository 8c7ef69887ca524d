"""Named queries of AMP002: clips, norm reads and gradient edits on still-scaled gradients."""

from __future__ import annotations

from .monitors import value
from .observed import _obs, display_key, source_order
from .state import SCALED


def clips_on_scaled_grads(model) -> list:
    """``(clip observation, scaler key, witness, why)`` for clips, norm reads and grad edits that
    run while the gradients of the scaler owning them are still scaled. With several scalers, the one whose
    optimizer holds the clipped parameters decides. In a function analysed on its own that steps
    a scaler it was handed, the gradients are assumed scaled at its entry: a clip there counts
    when the same path then reaches that scaler's ``step``/``unscale_``. The witness is the
    backward that scaled the gradients (why ``scaled``) or that later ``step``/``unscale_`` (why
    ``implied``)."""
    out = []
    seen: set[int] = set()
    # (one clip node has an observation per calling context: a method called from the AMP arm,
    # inside autocast, and from the fp32 arm)
    every = _obs(model, "clip")
    clips = {}
    for o in every:
        clips.setdefault(id(o.node), o)
    for obs in every:
        if obs.site is None or id(obs.site.stmt) in seen:
            continue
        hit = _scaled_at_clip(model, obs, obs.states)
        if hit is not None:
            seen.add(id(obs.site.stmt))
            out.append((obs, hit[0], hit[1], "scaled"))
    for s, node, use in _implied_clips(model):
        obs = clips.get(id(node))
        if obs is None or obs.site is None or id(obs.site.stmt) in seen:
            continue
        owners = model.grad_owners(obs.site)
        if owners and display_key(s) not in owners and s not in owners:
            continue
        seen.add(id(obs.site.stmt))
        out.append((obs, s, use.node, "implied"))
    return out


def _implied_clips(model):
    """``(scaler key, clip node, step/unscale observation)``: the clips (or calls of a plain
    helper that clips) a path made while the scaler's gradients were only assumed scaled, and
    the ``step``/``unscale_`` of that scaler the same path reached, which confirms it."""
    for use in _obs(model, "step", "unscale"):
        for st in use.states:
            if st.speculative:
                continue
            for s, node in value(st, "implied_clips"):
                if s == use.scaler:
                    yield s, node, use


def _scaled_at_clip(model, obs, states):
    """``(scaler key, the backward that scaled)`` when some exact path reaches the clip with the
    gradients of the scaler owning the clipped parameters still scaled."""
    owners = model.grad_owners(obs.site)
    hits = set()
    for st in states:
        if st.speculative:
            continue
        scaled = [k for k, f in st.scalers if f.grads is not None and f.grads[0] == SCALED]
        if owners:
            mine = [k for k in scaled if display_key(k) in owners or k in owners]
            named = [k for k, _f in st.scalers if display_key(k) in owners or k in owners]
            if not mine and named:
                continue  # the owning scaler's gradients are unscaled on this path
            if len(named) > len(mine) and mine:
                continue  # the same name in several calling contexts, unscaled in one: not this clip's
            scaled = mine or scaled
        if scaled:
            hits.add((scaled[0], dict(st.scalers)[scaled[0]].grads[1]))
    if not hits:
        return None
    # the same answer whatever order the states come in: the first scaler by name, then the
    # earliest backward
    return min(hits, key=lambda h: (h[0], source_order(model, h[1])))


def helper_clips_on_scaled_grads(model) -> list:
    """``(call site, clip observation, scaler key, backward or None)``: calls in this module of a
    plain helper function (no method, handed no scaler: another module's, or a utility of this
    one that neither meets a scaler nor back-propagates: ``clip_grads(model.parameters(), 1.0)``,
    ``log_grad_stats(model)``) that clips or reads the gradients while still scaled, or only
    assumed scaled (in a function handed the scaler that then steps it). The helper is right
    wherever it is called after ``unscale_``; this call is what is wrong."""
    out = []
    seen: set[int] = set()
    by_entry = {}
    for obs in _obs(model, "clip", every=True):
        if obs.site is None or not obs.entries:
            continue
        for entry, states in obs.entries.items():
            by_entry.setdefault(id(entry.node), (entry, obs))
            if id(entry.node) in seen or not model.owns(entry.node):
                continue
            hit = _scaled_at_clip(model, obs, states)
            if hit is not None:
                seen.add(id(entry.node))
                out.append((entry, obs, hit[0], hit[1]))
    for s, node, _use in _implied_clips(model) if by_entry else ():
        # (a function handed the scaler calls the helper: the later step confirms it)
        hit = by_entry.get(id(node))
        if hit is not None and id(node) not in seen and model.owns(node):
            seen.add(id(node))
            out.append((hit[0], hit[1], s, None))
    return out


