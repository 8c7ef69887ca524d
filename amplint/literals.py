"""Large constant literals are blanked before LibCST parses a file.

A data table written as a literal (``WEIGHTS = [0.1, 0.2, ...]`` with 200,000 numbers) holds
nothing the AMP rules read, yet LibCST builds several nodes per element: a 1.5 MB literal took
6.5 s and 900 MB to parse. A bracketed literal made only of constants (numbers, strings, bytes,
``None``/``True``/``False``, signs, and nested lists, tuples, sets and dicts of them) and at
least :data:`MIN_SPAN` characters long is handed to LibCST with its inside emptied: its line
breaks are kept inside one triple-quoted string (one token for LibCST), so every row of the
file, and every column outside the literal, stays where it was: positions, ``noqa`` comments
and fixes are computed on the real text. A fix whose edits would touch a blanked literal is
dropped (it would have been computed from the blank).
"""

from __future__ import annotations

import ast
import re
import unicodedata

MIN_SPAN = 4096  # characters; smaller literals cost LibCST little
MIN_FILE = 16384  # files smaller than this are not searched at all
_PAIRS = {"(": ")", "[": "]", "{": "}"}
_DECORATED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_NOT_NEWLINE = re.compile(r"[^\r\n]")
_NEWLINES = re.compile(r"\r\n|\r|\n")
_NOTHING_AFTER = re.compile(r"[ \t\f)\]}]*(?:#.*)?")


def _constant(node: ast.AST) -> bool:
    """A constant, a signed constant, or a container of constants (checked without recursion)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, ast.Constant):
            continue
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, (ast.USub, ast.UAdd, ast.Invert)):
            stack.append(n.operand)
        elif isinstance(n, (ast.List, ast.Tuple, ast.Set)):
            stack.extend(n.elts)
        elif isinstance(n, ast.Dict):
            if any(k is None for k in n.keys):  # ``{**other}``
                return False
            stack.extend(n.keys)  # type: ignore[arg-type]
            stack.extend(n.values)
        else:
            return False
    return True


def blank_large_literals(text: str, tree: ast.Module | None) -> tuple[str, list[tuple[int, int]]]:
    """``text`` with the large constant literals blanked, and the row ranges blanked (1-based,
    inclusive)."""
    if tree is None or len(text) < MIN_FILE:
        return text, []
    from .lines import split_lines

    lines = split_lines(text, keepends=True)
    starts: list[int] = []
    pos = 0
    for line in lines:
        starts.append(pos)
        pos += len(line)
    spans: list[tuple[int, int]] = []  # char offsets [start, end) of the literals
    rows: list[tuple[int, int]] = []
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        last = getattr(node, "end_lineno", None)
        if last is not None and not isinstance(node, _DECORATED):
            # a node shorter than a large literal holds none (its children lie inside it; a
            # definition's decorators lie before its ``lineno``): most statements are skipped whole
            if last == node.lineno:
                if node.end_col_offset - node.col_offset < MIN_SPAN:  # bytes: at least the characters
                    continue
            elif (_offset(lines, starts, last, node.end_col_offset)
                  - _offset(lines, starts, node.lineno, node.col_offset)) < MIN_SPAN:
                continue
        if isinstance(node, (ast.List, ast.Tuple, ast.Set, ast.Dict)) and node.end_lineno is not None:
            start = _offset(lines, starts, node.lineno, node.col_offset)
            end = _offset(lines, starts, node.end_lineno, node.end_col_offset)
            if end - start >= MIN_SPAN and text[start:start + 1] in _PAIRS \
                    and text[end - 1:end] == _PAIRS[text[start]] and _constant(node):
                spans.append((start + 1, end - 1))
                rows.append((node.lineno, node.end_lineno))
                continue
        stack.extend(ast.iter_child_nodes(node))
    if not spans:
        return text, []
    parts = []
    last = 0
    for start, end in sorted(spans):
        parts.append(text[last:start])
        parts.append(_blank(text, start, end))
        last = end
    parts.append(text[last:])
    return "".join(parts), sorted(rows)


def _blank(text: str, start: int, end: int) -> str:
    """The inside of a literal, emptied: its line breaks kept inside one triple-quoted string
    (a single token for LibCST, however many lines), padded so that what follows the literal on
    its last line keeps its column."""
    inner = text[start:end]
    breaks = _NEWLINES.findall(inner)
    line_end = _NEWLINES.search(text, end)
    follows = not _NOTHING_AFTER.fullmatch(text[end + 1:line_end.start() if line_end else len(text)])
    if not breaks:
        return _NOT_NEWLINE.sub(" ", inner) if follows else ""
    last_line = len(inner) - (inner.rfind("\n") if "\n" in inner else inner.rfind("\r")) - 1
    if last_line < 3:
        if follows:
            return _NOT_NEWLINE.sub(" ", inner)  # keep every column of what follows
        last_line = 3
    return '"""' + "".join(breaks) + " " * (last_line - 3) + '"""'


def _offset(lines: list[str], starts: list[int], lineno: int, col_offset: int) -> int:
    """The character offset of CPython's (line, UTF-8 byte column)."""
    line = lines[lineno - 1] if lineno - 1 < len(lines) else ""
    if line.isascii():
        return starts[lineno - 1] + col_offset
    return starts[lineno - 1] + len(line.encode("utf-8")[:col_offset].decode("utf-8", "replace"))


def touches(rows: list[tuple[int, int]], first: int, last: int) -> bool:
    return any(a <= last and first <= b for a, b in rows)


def fold_identifiers(text: str) -> tuple[str, list[tuple[int, int]]]:
    """``text`` with every identifier in its NFKC form, as CPython reads it (``ｕｐｄａｔｅ`` is
    ``update``), and the rows changed. Only identifiers whose folded form has as many characters
    are rewritten, so every position stays; fixes are not offered on the rows changed."""
    if text.isascii() or unicodedata.normalize("NFKC", text) == text:
        return text, []
    import io
    import tokenize

    lines = io.StringIO(text).readlines()  # the lines tokenize numbers
    changed: dict[int, list[tuple[int, int, str]]] = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.NAME and not tok.string.isascii():
                folded = unicodedata.normalize("NFKC", tok.string)
                if folded != tok.string and len(folded) == len(tok.string) and tok.start[0] == tok.end[0]:
                    changed.setdefault(tok.start[0], []).append((tok.start[1], tok.end[1], folded))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return text, []
    if not changed:
        return text, []
    for row, edits in changed.items():
        line = lines[row - 1]
        for start, end, folded in sorted(edits, reverse=True):
            line = line[:start] + folded + line[end:]
        lines[row - 1] = line
    return "".join(lines), [(r, r) for r in sorted(changed)]


#: an IPython escape at the start of a line of a notebook exported as a script: ``!pip install
#: x``, ``%matplotlib inline``, ``%%time``, ``files = !ls``
_MAGIC = re.compile(r"^([ \t]*)(?:[!%]|[A-Za-z_][\w.]*[ \t]*=[ \t]*!)(?![=])[^\r\n]*", re.M)


def blank_magics(text: str) -> tuple[str, list[tuple[int, int]]] | None:
    """``text`` with the IPython escape lines of a notebook exported as a ``.py`` (Colab, Kaggle)
    turned into ``pass`` statements of the same length, and the rows changed; None when there is
    none. Used only where CPython rejects the file: the file stays an AMP000, its Python is
    still linted, and no fix is offered on those rows."""
    rows: list[tuple[int, int]] = []
    starts = [0] + [m.end() for m in _NEWLINES.finditer(text)]

    def repl(m: re.Match) -> str:
        import bisect

        row = bisect.bisect_right(starts, m.start())
        rows.append((row, row))
        body = m.group(0)[len(m.group(1)):]
        return m.group(1) + ("pass" + " " * (len(body) - 4) if len(body) >= 4 else "pass")

    out = _MAGIC.sub(repl, text)
    return (out, rows) if rows else None
