"""Incremental LibCST parsing for the language server: an edit re-parses the top-level
statements it touched; the others are the previous tree's own nodes.

The previous text and tree of each document are kept with the offset where each top-level
statement's code ends (a statement's code includes the blank and comment lines LibCST gives it).
For a new text, the statements whose code lies wholly in the common prefix, and those wholly in
the common suffix, of the old and the new text are reused; the text between them is parsed as a
module of its own, and its statements are spliced in. LibCST parses text losslessly, so the
spliced tree's code is the new text. Where the middle parse would not be the one a whole parse
gives (another default indentation or newline, no statement to carry its leading lines), the
whole text is parsed.
"""

from __future__ import annotations

import libcst as cst

from .cstparse import parse_module

#: documents whose trees are kept (a server edits a few at a time)
MAX_DOCUMENTS = 32


class IncrementalParser:
    def __init__(self) -> None:
        self._last: dict[str, tuple[str, cst.Module, list[int]]] = {}

    def __call__(self, text: str, name: str) -> cst.Module:
        prev = self._last.get(name)
        hit = _splice(prev, text) if prev is not None else None
        if hit is None:
            module = parse_module(text)
            hit = module, _ends(module, 0, list(range(len(module.body))))
        module, ends = hit
        self._last.pop(name, None)
        if len(self._last) >= MAX_DOCUMENTS:
            self._last.pop(next(iter(self._last)))
        self._last[name] = (text, module, ends)
        return module

    def forget(self, name: str | None = None) -> None:
        if name is None:
            self._last.clear()
        else:
            self._last.pop(name, None)


def _ends(module: cst.Module, start: int, which: list[int]) -> list[int]:
    """Offsets where the header (first entry) and each statement's code end, from ``start``."""
    out = [start + len(_code(module, module.header))] if not which or which[0] == 0 else []
    pos = out[0] if out else start
    for i in which:
        pos += len(module.code_for_node(module.body[i]))
        out.append(pos)
    return out


def _code(module: cst.Module, lines) -> str:
    return "".join(module.code_for_node(line) for line in lines)


def _splice(prev: tuple[str, cst.Module, list[int]], text: str) -> tuple[cst.Module, list[int]] | None:
    old, mod, ends = prev
    n = len(mod.body)
    if n == 0 or text == old:
        return (mod, ends) if text == old else None
    # ends[0]: end of the header; ends[i + 1]: end of statement i
    limit = min(len(old), len(text))
    prefix = _common(old, text, limit, lambda s, i, k: s[i:i + k])
    suffix = _common(old, text, limit - prefix, lambda s, i, k: s[len(s) - i - k:len(s) - i])
    keep_head = sum(1 for i in range(n) if ends[i + 1] <= prefix and ends[0] <= prefix)
    tail_from = len(old) - suffix
    keep_tail = sum(1 for i in range(keep_head, n) if ends[i] >= tail_from)  # statement i starts at ends[i]
    if keep_tail == n - keep_head or keep_head + keep_tail == 0:
        return None  # nothing new to parse, or nothing to reuse
    start = ends[keep_head] if keep_head else 0  # (with no statement kept, the header is parsed again)
    stop_old = ends[n - keep_tail]  # where the reused tail starts in the old text
    if keep_tail == 0:
        stop_old = len(old)  # the footer is re-parsed with the last statements
    middle_text = text[start:len(text) - (len(old) - stop_old)]
    try:
        middle = parse_module(middle_text)
    except cst.ParserSyntaxError:
        return None
    if not middle.body or middle.default_indent != mod.default_indent or middle.default_newline != mod.default_newline:
        return None
    stmts = list(middle.body)
    head_len, foot_len = len(_code(middle, middle.header)), len(_code(middle, middle.footer))
    # the middle statements' lengths: one statement is the middle text less its header and footer
    # (no code generation of the edited function); several are generated
    lens = [len(middle_text) - head_len - foot_len] if len(stmts) == 1 else [len(middle.code_for_node(x)) for x in stmts]
    header = mod.header
    if keep_head == 0:
        header = middle.header
    elif middle.header:
        stmts[0] = stmts[0].with_changes(leading_lines=[*middle.header, *stmts[0].leading_lines])
        lens[0] += head_len
    tail = list(mod.body[n - keep_tail:])
    footer, trailing, encoding = mod.footer, mod.has_trailing_newline, mod.encoding
    if keep_tail == 0:
        footer, trailing = middle.footer, middle.has_trailing_newline
    elif middle.footer:
        tail[0] = tail[0].with_changes(leading_lines=[*middle.footer, *tail[0].leading_lines])
    elif not middle.has_trailing_newline:
        return None
    body = list(mod.body[:keep_head]) + stmts + tail
    module = mod.with_changes(body=body, header=header, footer=footer, has_trailing_newline=trailing,
                              encoding=encoding)
    new_ends = ends[:keep_head + 1] if keep_head else [head_len]
    for length in lens:
        new_ends.append(new_ends[-1] + length)
    if keep_tail:
        first = n - keep_tail  # the first reused statement, its moved footer lines in front of it
        new_ends.append(new_ends[-1] + ends[first + 1] - ends[first] + (foot_len if middle.footer else 0))
        delta = len(text) - len(old)
        new_ends += [e + delta for e in ends[first + 2:]]
    if len(new_ends) != len(body) + 1 or new_ends[-1] > len(text):
        return None
    return module, new_ends


def _common(a: str, b: str, limit: int, piece) -> int:
    """Length of the common prefix (or, with the other ``piece``, suffix) of ``a`` and ``b``, at
    most ``limit``: compared block by block, then within the first block that differs."""
    n, step = 0, 4096
    while n < limit:
        k = min(step, limit - n)
        if piece(a, n, k) == piece(b, n, k):
            n += k
            continue
        if k == 1:
            return n
        step = max(1, k // 8)
    return n
