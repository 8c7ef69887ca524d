"""Suppression comments: ``# noqa``, ``# noqa: AMP001, AMP002``, ``# amplint: noqa[: CODES]``."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .lines import split_lines

_CODE = r"[A-Za-z]+[0-9]+"
LINE_NOQA = re.compile(rf"#\s*(?i:noqa)(?P<sep>\s*:\s*(?P<codes>{_CODE}(?:[\s,]+{_CODE})*))?", re.ASCII)
FILE_NOQA = re.compile(rf"#\s*(?i:amplint)\s*:\s*(?i:noqa)(?:\s*:\s*(?P<codes>{_CODE}(?:[\s,]+{_CODE})*))?", re.ASCII)


@dataclass
class NoqaDirective:
    row: int
    codes: frozenset[str] | None  # None: every code
    text: str
    used: set[str] = field(default_factory=set)  # codes it suppressed (for the unused-noqa check)
    used_any: bool = False
    col: int = 1


@dataclass
class NoqaMap:
    lines: dict[int, NoqaDirective]
    file_all: bool
    file_codes: frozenset[str]
    file_directives: list[NoqaDirective]

    def suppresses(self, code: str, rows: tuple[int, ...]) -> bool:
        if self.file_all or code in self.file_codes:
            return True
        for r in rows:
            d = self.lines.get(r)
            if d is None:
                continue
            if d.codes is None or code in d.codes:
                d.used.add(code)
                d.used_any = True
                return True
        return False


def _split(codes: str | None) -> frozenset[str] | None:
    if codes is None:
        return None
    return frozenset(c.upper() for c in re.split(r"[\s,]+", codes.strip()) if c)


def comments(source: str) -> list[tuple[int, int, str]]:
    """(row, col, text) of every comment; falls back to a line scan if tokenizing fails."""
    import io
    import tokenize

    out: list[tuple[int, int, str]] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT:
                out.append((tok.start[0], tok.start[1] + 1, tok.string))
        return out
    except (tokenize.TokenError, SyntaxError, IndentationError, ValueError):
        out = []
        for i, line in enumerate(split_lines(source), 1):
            j = line.find("#")
            if j >= 0:
                out.append((i, j + 1, line[j:]))
        return out


def parse(source: str) -> NoqaMap:
    lines: dict[int, NoqaDirective] = {}
    file_all = False
    file_codes: set[str] = set()
    file_directives = []
    if "noqa" not in source.lower():
        return NoqaMap({}, False, frozenset(), [])
    for row, col, text in comments(source):
        m = FILE_NOQA.search(text)
        if m is not None:
            codes = _split(m.group("codes"))
            d = NoqaDirective(row, codes, text, col=col)
            file_directives.append(d)
            if codes is None:
                file_all = True
            else:
                file_codes |= codes
            continue
        m = LINE_NOQA.search(text)
        if m is not None:
            lines[row] = NoqaDirective(row, _split(m.group("codes")), text, col=col + m.start())
    return NoqaMap(lines, file_all, frozenset(file_codes), file_directives)
