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


#: how many statements LibCST may reject in one file before the file is given up
MAX_SKIPPED = 8


def parse_around_limits(text: str, tree) -> tuple[cst.Module, list[tuple[tuple[int, int], cst.ParserSyntaxError]]]:
    """Parse ``text``, which CPython compiled to ``tree`` (an ``ast.Module``). Where LibCST's
    grammar rejects a statement (``(x): int = 1``, a class with a keyword before a ``*`` base),
    that statement's lines are read as ``pass`` (same rows, so every position stays exact) and the
    parse is retried: the rest of the file is still analysed. Returns the module and, per
    statement read as ``pass``, its rows and LibCST's error. Raises LibCST's first error when the
    statement cannot be found or more than :data:`MAX_SKIPPED` are rejected."""
    from .lines import split_lines

    skipped: list[tuple[tuple[int, int], cst.ParserSyntaxError]] = []
    while True:
        try:
            return parse_module(text), skipped
        except cst.ParserSyntaxError as e:
            span = _culprit(tree, max(e.raw_line, 1), text) if tree is not None else None
            if span is None or len(skipped) >= MAX_SKIPPED or any(s == span[:2] for s, _e in skipped):
                raise (skipped[0][1] if skipped else e) from None
            first, last, indent = span
            lines = split_lines(text, keepends=True)
            for row in range(first, last + 1):
                line = lines[row - 1]
                end = line[len(line.rstrip("\r\n")):]
                lines[row - 1] = (indent + "pass" if row == first else "") + end
            text = "".join(lines)
            skipped.append(((first, last), e))


def _culprit(tree, row: int, text: str):
    """``(first row, last row, indentation)`` of the statement LibCST rejected. Its error row is
    where LibCST gave up, which can be rows after the statement (past a class body), so the
    statements that start at or before ``row`` are tried on their own (dedented), nearest first;
    in the first that LibCST rejects alone, the innermost such statement is the one (a compound
    statement whose body parses: its header). None when no statement is rejected alone."""
    import ast
    import textwrap

    from .lines import split_lines

    lines = split_lines(text, keepends=True)

    def span(node) -> tuple[int, int, str]:
        decorators = getattr(node, "decorator_list", None) or ()
        start = min([node.lineno] + [d.lineno for d in decorators])
        line = lines[start - 1] if start - 1 < len(lines) else ""
        return start, node.end_lineno or node.lineno, line[:len(line) - len(line.lstrip(" \t\f"))]

    def rejected(sp) -> bool:
        try:
            parse_module(textwrap.dedent("".join(lines[sp[0] - 1:sp[1]])))
        except cst.ParserSyntaxError:
            return True
        except Exception:  # noqa: BLE001 - not a module on its own (LibCST's other errors)
            return False
        return False

    def children(node) -> list:
        out = []
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            for c in getattr(node, field, None) or ():
                out.extend([c] if isinstance(c, ast.stmt) else getattr(c, "body", []))
        return out

    def search(stmts, depth: int = 0):
        for node in reversed([n for n in stmts if span(n)[0] <= row]):
            sp = span(node)
            if rejected(sp):
                return (search(children(node), depth + 1) if depth < 50 else None) or sp
        return None

    return search(list(getattr(tree, "body", [])))
