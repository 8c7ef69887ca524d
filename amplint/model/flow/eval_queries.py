"""Named queries about evaluation code (AMP201's territory), read by the rules that leave
scaler calls there to AMP201."""

from __future__ import annotations

from .state import CLEAN


def eval_context(obs, model=None) -> str | None:
    """Where a scaler call observation runs in evaluation code, in words, or None:
    gradients disabled (for ``scale``, or when no scaled backward precedes), or after
    ``m.eval()`` / in an evaluation function with no backward."""
    disabled = obs.grad_disabled is not None
    if disabled and (obs.kind == "scale" or _no_backward_before(obs) or _backward_disabled_too(model, obs)):
        return "gradients are disabled here"
    for r in reversed(obs.regions):
        # (the words say where the call is, not which path made it count: under no_grad they
        # are the same whether or not a step came before)
        if r.kind == "eval" and not r.has_backward:
            target = f"`{r.target}`" if r.target else "the model"
            return "gradients are disabled here" if disabled else f"after {target}.eval() with no backward"
        if r.kind == "eval_name" and not r.has_backward:
            return "gradients are disabled here" if disabled else "an evaluation function with no backward"
    return None


def _backward_disabled_too(model, obs) -> bool:
    """The scaled backward before the call ran in the same grad-disabled region (``@no_grad``
    test-time adaptation doing scale/backward/step/update): the step has no gradients of this
    region to apply. (A ``with torch.no_grad(): scaler.step(opt)`` after a backward outside it
    is harmless and stays silent.)"""
    if model is None:
        return False
    keys = model.__dict__.get("_disabled_backwards")
    if keys is None:
        keys = model.__dict__["_disabled_backwards"] = {
            (id(o.grad_disabled), o.scaler) for o in model.all_observations("scaled_backward")
            if o.grad_disabled is not None}
    return (id(obs.grad_disabled), obs.scaler) in keys


def _no_backward_before(obs) -> bool:
    s = obs.scaler
    for st in obs.states:
        f = st.facts(s)
        if not f.ready and not f.stages:
            continue  # nothing known about this scaler on this path
        if obs.kind == "update":
            if f.all_ready:
                return True
        elif not f.sbw and (f.grads is None or f.grads[0] == CLEAN):
            return True
    return False


def scaler_calls_in_eval(model) -> list:
    """``(observation, where)`` for scaler calls in evaluation code."""
    out = []
    seen = set()
    for obs in model.observations("scale", "unscale", "step", "update"):
        if obs.site is None or obs.node in seen:
            continue
        where = eval_context(obs, model)
        if where is not None:
            seen.add(obs.node)
            out.append((obs, where))
    return out


def in_eval_code(model, site) -> bool:
    """The call sits where AMP201 reports scaler calls, in some calling context."""
    contexts = [o for o in model.observations("scale", "unscale", "step", "update") if o.node is site.node]
    if not contexts:
        regions = tuple(site.func.regions) + tuple(site.regions)
        for r in reversed(regions):
            if r.kind == "no_grad":
                return True
            if r.kind == "enable_grad":
                break
        return any(r.kind in ("eval", "eval_name") and not r.has_backward for r in regions)
    return any(_eval_regions(o.regions) for o in contexts)


def _eval_regions(regions) -> bool:
    for r in reversed(regions):
        if r.kind == "no_grad":
            return True
        if r.kind == "enable_grad":
            break
    return any(r.kind in ("eval", "eval_name") and not r.has_backward for r in regions)

