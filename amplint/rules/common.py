"""Small helpers shared by rule modules (no LibCST import at module level)."""

from __future__ import annotations

from typing import Iterable


def dedupe(nodes: Iterable) -> list:
    seen: set[int] = set()
    out = []
    for n in nodes:
        if id(n) not in seen:
            seen.add(id(n))
            out.append(n)
    return out


def sites_by_node(model) -> dict:
    return model.call_of


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
        head = model.code_for(site.node.func)
        text = f"{head}(...)"
    return text
