"""The rule registry: every ``ampNNN_<name>.py`` module of this package holds one rule.

Importing this package imports no LibCST (rules import it lazily inside ``check``), so the
CLI can build the prefilter from the rules' triggers before deciding to parse anything.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from functools import lru_cache

from .base import Finding, FixPlan, NodeEdit, Rule

__all__ = ["Rule", "Finding", "FixPlan", "NodeEdit", "all_rules", "rule_by_code"]

_MODULE = re.compile(r"^amp\d{3}_[a-z0-9_]+$")


@lru_cache(maxsize=None)
def all_rules() -> tuple[type[Rule], ...]:
    found: list[type[Rule]] = []
    for info in pkgutil.iter_modules(__path__):
        if not _MODULE.match(info.name):
            continue
        mod = importlib.import_module(f"{__name__}.{info.name}")
        classes = [
            v for v in vars(mod).values()
            if isinstance(v, type) and issubclass(v, Rule) and v is not Rule and v.__module__ == mod.__name__
        ]
        if len(classes) != 1:
            raise RuntimeError(f"{mod.__name__} must define exactly one rule, found {len(classes)}")
        found.append(classes[0])
    return tuple(sorted(found, key=lambda r: r.code))


def rule_by_code(code: str) -> type[Rule] | None:
    for r in all_rules():
        if r.code == code:
            return r
    return None
