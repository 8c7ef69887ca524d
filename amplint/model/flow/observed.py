"""What every named query starts from: a module's observations, and flow keys as written."""

from __future__ import annotations


def _obs(model, *kinds, every: bool = False):
    """This module's observations of ``kinds`` (``every``: all modules'), except those made in
    a loop that did not converge."""
    obs = model.all_observations(*kinds) if every else model.observations(*kinds)
    bad = model.flow_unconverged
    return [o for o in obs if not (bad and o.site is not None and bad & set(o.site.loops))]


def display_key(key: str | None) -> str:
    """A canonical flow key as the user wrote it: ``train_step#1.scaler`` -> ``scaler``."""
    if not key:
        return "scaler"
    if "#" in key:
        key = key.rsplit("#", 1)[-1].split(".", 1)[-1]
    return key


def source_order(model, node) -> tuple:
    """Where ``node`` is, for ties between hits broken the same way whatever order the states
    come in: this module's calls by evaluation order first, then another module's nodes by
    file and position (not by object address)."""
    site = model.call_of.get(node)
    if site is not None:
        return (0, site.order, "", ((0, 0), (0, 0)))
    owner = model.owner_of(node)
    span = owner.span(node) if owner is not None else None
    return (1, 0, str(getattr(owner, "path", "")), span or ((0, 0), (0, 0)))
