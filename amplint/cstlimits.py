"""When LibCST cannot parse what CPython compiles: say so plainly.

amplint runs CPython's own parser first, so a file that reaches LibCST is valid Python; a LibCST
parse error there is a limit of LibCST's grammar, not a syntax error of the user's code. The
AMP000 then names the construct (found on CPython's tree) and the LibCST limit, so that nobody
hunts for a syntax error that is not there, and says which rows were not analysed: the statement
LibCST rejects is read as ``pass`` and the rest of the file is analysed (or, when that statement
cannot be found, the file is not).
"""

from __future__ import annotations

import ast
import re
import sys


def _libcst_version() -> str:
    try:
        from libcst._version import __version__

        return __version__
    except Exception:  # noqa: BLE001 - a version string is optional
        return "?"


# constructs LibCST's grammar does not accept although CPython does: (test, what, limit)
def _class_keyword_before_star(node: ast.AST) -> bool:
    if not isinstance(node, ast.ClassDef) or not node.keywords:
        return False
    first_kw = min((k.lineno, k.col_offset) for k in node.keywords)
    return any(isinstance(b, ast.Starred) and (b.lineno, b.col_offset) > first_kw for b in node.bases)


def _parenthesized_annotated_target(node: ast.AST, source_lines: list[str]) -> bool:
    if not isinstance(node, ast.AnnAssign) or not isinstance(node.target, ast.Name):
        return False
    line = source_lines[node.lineno - 1] if node.lineno - 1 < len(source_lines) else ""
    return line.encode("utf-8")[node.col_offset:].lstrip().startswith(b"(")


_KNOWN = (
    (_class_keyword_before_star, "a class definition with a keyword argument before a `*` base "
     "(`class A(x=1, *bases)`)", "LibCST's grammar accepts `*bases` only before the keywords of a class"),
    (_parenthesized_annotated_target, "an annotated assignment to a parenthesized name (`(x): int = 1`)",
     "LibCST's grammar accepts only a bare name, an attribute or a subscript as the target"),
)

_NAMES = {
    "ClassDef": "a class definition", "FunctionDef": "a function definition",
    "AsyncFunctionDef": "an async function definition", "AnnAssign": "an annotated assignment",
    "Assign": "an assignment", "AugAssign": "an augmented assignment", "Match": "a `match` statement",
    "With": "a `with` statement", "AsyncWith": "an `async with` statement", "For": "a `for` loop",
    "AsyncFor": "an `async for` loop", "While": "a `while` loop", "If": "an `if` statement", "Try": "a `try` statement",
    "TryStar": "a `try`/`except*` statement", "Expr": "an expression statement", "Return": "a `return` statement",
    "Import": "an import", "ImportFrom": "an import", "Global": "a `global` statement", "Delete": "a `del` statement",
    "Raise": "a `raise` statement", "Assert": "an `assert` statement", "TypeAlias": "a `type` alias",
    "JoinedStr": "an f-string", "Lambda": "a lambda", "Call": "a call", "Subscript": "a subscript",
}


def explain(tree: ast.Module | None, text: str, row: int, col: int, libcst_message: str,
            rows: tuple[int, int] | None = None) -> tuple[str, int, int]:
    """The AMP000 message, row and column for a LibCST parse error on a file CPython compiled.
    ``rows``: the statement's rows, read as ``pass`` so that the rest of the file is analysed
    (:func:`amplint.cstparse.parse_around_limits`); without them, the file was not analysed."""
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    short = re.split(r":? expected one of ", libcst_message, maxsplit=1)[0].strip() or "parse error"
    if rows is None:
        tail = f"; the file was not analysed (LibCST {_libcst_version()}: {short})"
    else:
        where = f"row {rows[0]}" if rows[0] == rows[1] else f"rows {rows[0]}-{rows[1]}"
        tail = f"; {where} read as `pass`, the rest of the file analysed (LibCST {_libcst_version()}: {short})"
    if tree is not None:
        lines = text.splitlines()
        for node in ast.walk(tree):
            if rows is not None and not rows[0] <= getattr(node, "lineno", 0) <= rows[1]:
                continue
            for test, what, limit in _KNOWN:
                try:
                    hit = test(node, lines) if test is _parenthesized_annotated_target else test(node)
                except Exception:  # noqa: BLE001 - a description is best effort
                    hit = False
                if hit:
                    return (f"LibCST, the parser amplint uses, cannot parse {what}, which Python {version} accepts: "
                            f"{limit}{tail}", node.lineno, node.col_offset + 1)
        construct = _construct_at(tree, row)
        if construct is not None:
            what, r, c = construct
            return (f"LibCST, the parser amplint uses, cannot parse {what} here, which Python {version} accepts"
                    f"{tail}", r, c)
    return (f"LibCST, the parser amplint uses, cannot parse this file, which Python {version} accepts{tail}",
            max(row, 1), max(col, 1))


def _construct_at(tree: ast.Module, row: int) -> tuple[str, int, int] | None:
    """The innermost statement (or notable expression) of CPython's tree on ``row``."""
    best = None
    for node in ast.walk(tree):
        lineno = getattr(node, "lineno", None)
        end = getattr(node, "end_lineno", None)
        if lineno is None or end is None or not (lineno <= row <= end):
            continue
        name = type(node).__name__
        if name not in _NAMES:
            continue
        span = end - lineno
        if best is None or span <= best[0]:
            best = (span, _NAMES[name], lineno, node.col_offset + 1)
    if best is None:
        return None
    return best[1], best[2], best[3]
