"""Small helpers shared by rule modules for wording findings (no LibCST import at module level)."""

from __future__ import annotations

from typing import Iterable

SCALER_METHODS = ("scale", "unscale_", "step", "update")


def dedupe(nodes: Iterable) -> list:
    seen: set[int] = set()
    out = []
    for n in nodes:
        if id(n) not in seen:
            seen.add(id(n))
            out.append(n)
    return out


def recv_text(model, site) -> str:
    """Source text of a method call's receiver (``self.scaler``)."""
    node = site.recv_node
    if node is None:
        return site.recv or ""
    return site.recv or model.code_for(node)


def call_text(model, site, limit: int = 60) -> str:
    """A short rendering of a call: ``scaler.step(optimizer)``; long arguments become ``...``."""
    text = " ".join(model.code_for(site.node).split())
    if len(text) > limit:
        text = f"{model.code_for(site.node.func)}(...)"
    return text


def node_text(model, node) -> str:
    site = model.call_of.get(node)
    return call_text(model, site) if site is not None else " ".join(model.code_for(node).split())


def display_key(key: str | None) -> str:
    """A canonical flow key as the user wrote it: ``train_step#1.scaler`` -> ``scaler``."""
    from ..model.flow.queries import display_key as _display

    return _display(key)


def scaler_text(model, func, key: str | None) -> str | None:
    """How the scaler with flow key ``key`` is spelled in ``func``: the receiver of its scaler
    calls there, when that is unambiguous."""
    texts = []
    for c in func.calls:
        if c.recv is not None and c.method in SCALER_METHODS and model.is_scaler(func, c.recv) and c.recv not in texts:
            texts.append(c.recv)
    want = display_key(key)
    if want in texts:
        return want
    if len(texts) == 1:
        return texts[0]
    if not texts and key and "#" not in key and model.is_scaler(func, key):
        return key  # ``self.scaler`` in a helper method that does not mention it otherwise
    return None


def stepped_optimizer(model, func, scaler: str | None) -> str | None:
    """The one optimizer ``scaler`` steps in ``func``, as written (None when several or none)."""
    opts = []
    for c in func.calls:
        if c.method == "step" and c.recv == scaler and model.is_scaler(func, c.recv):
            a = c.arg(0, "optimizer")
            if a is not None:
                opts.append(model.code_for(a.value))
    uniq = list(dict.fromkeys(opts))
    return uniq[0] if len(uniq) == 1 else None


def related_at(model, node, message: str) -> tuple:
    """A related location for a finding of ``model``: ``(node, message)`` when the node is in this
    module, ``(path, start, end, message)`` when it is in another project module the flow
    reached (the caller's ``scale()`` of a helper's clip); ``()`` when it cannot be placed."""
    owner = model.owner_of(node)
    if owner is model:
        return ((node, message),)
    if owner is None or owner.path is None:
        return ()
    span = owner.span(node)
    if span is None:
        return ()
    return ((str(owner.path), span[0], span[1], message),)
