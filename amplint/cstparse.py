"""LibCST's ``parse_module``, without re-validating the nodes its own parser builds.

Every LibCST node checks its fields in ``__post_init__`` (``CSTNode._validate``: parentheses
paired, the whitespace a keyword needs...). Nodes built by LibCST's parser from source that parsed
hold those by construction, and LibCST's own comment on the hook says as much ("avoid validating
the tree when parsing a file"); the checks are a sixth of a parse. They are switched off for the
parse only: nodes amplint builds itself (the fixes) are still validated. The original hook is
captured once, so concurrent parses can only restore it, never lose it.
"""

from __future__ import annotations

import libcst as cst

try:
    from libcst._nodes.base import CSTNode

    _VALIDATE = CSTNode.__dict__.get("__post_init__")
except ImportError:  # a LibCST that moved its base class: parse as it is
    CSTNode = None  # type: ignore[assignment,misc]
    _VALIDATE = None


def _skip(self) -> None:
    return None


def parse_module(text: str) -> cst.Module:
    if _VALIDATE is None:
        return cst.parse_module(text)
    CSTNode.__post_init__ = _skip  # type: ignore[method-assign]
    try:
        return cst.parse_module(text)
    finally:
        CSTNode.__post_init__ = _VALIDATE  # type: ignore[method-assign]
