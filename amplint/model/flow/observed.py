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


def source_order(model, node) -> int:
    """The evaluation order of a call node among the module's calls (-1 when not a call): ties
    between hits broken the same way whatever order the states come in."""
    site = model.call_of.get(node)
    return site.order if site is not None else -1
