"""Suppression comments: ``# noqa``, ``# noqa: AMP001, AMP002``, ``# amplint: noqa[: CODES]``."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .lines import split_lines

_CODE = r"[A-Za-z]+[0-9]+(?![A-Za-z0-9_-])"
LINE_NOQA = re.compile(rf"#\s*(?i:noqa)(?![A-Za-z0-9_-])(?P<sep>\s*:\s*(?P<codes>{_CODE}(?:[\s,]+{_CODE})*))?", re.ASCII)
FILE_NOQA = re.compile(rf"#\s*(?i:amplint)\s*:\s*(?i:noqa)(?![A-Za-z0-9_-])(?:\s*:\s*(?P<codes>{_CODE}(?:[\s,]+{_CODE})*))?",
                       re.ASCII)
# any comment that means to be a directive: ``# noqa``, ``# amplint: noqa``, ``# amplint noqa``
_DIRECTIVE = re.compile(r"#\s*(?P<file>(?i:amplint)\s*:?\s*)?(?i:noqa)(?![A-Za-z0-9_])", re.ASCII)
_CODES = re.compile(rf"\s*(?P<codes>{_CODE}(?:[\s,]+{_CODE})*)[\s,]*", re.ASCII)
_CODE_LIKE = re.compile(r"[\s,]*(?P<word>[A-Za-z]+[-_.]?[0-9][\w.-]*)", re.ASCII)
# a rule selector where codes belong (``# noqa ALL``, ``# noqa AMP``): not an explanation
_SELECTOR_LIKE = re.compile(r"[\s,]*(?P<word>ALL|A(?:MP?)?)(?![\w.-])", re.ASCII)
# another separator in place of the colon (``# noqa=AMP002``, ``# noqa - AMP002``, ``# noqa.AMP002``)
_OTHER_SEPARATOR = re.compile(r"\s*[=.;,-]+\s*(?:[A-Za-z]+[-_.]?[0-9]|ALL\b|A(?:MP?)?(?![\w.-]))", re.ASCII)


def _check_directive(text: str) -> tuple[str | None, int, str | None, str | None]:
    """Classify the directive in one comment: (kind, offset, codes, error). ``kind`` is "line",
    "file" or None (no directive); ``codes`` None means every code; ``error`` says why a
    directive is malformed (it then suppresses nothing, like ruff)."""
    m = _DIRECTIVE.search(text)
    if m is None:
        return None, 0, None, None
    prefix = m.group("file")
    kind = "file" if prefix is not None else "line"
    shown = "# amplint: noqa" if prefix is not None else "# noqa"
    if prefix is not None and ":" not in prefix:
        return kind, m.start(), None, "write `# amplint: noqa` (with a colon after `amplint`)"
    rest = text[m.end():]
    colon = re.match(r"\s*:", rest)
    if colon is not None:
        after = rest[colon.end():]
        c = _CODES.match(after)
        if c is None:
            word = _CODE_LIKE.match(after)
            if word is not None:
                return kind, m.start(), None, f"`{word.group('word')}` is not a rule code (write e.g. `{shown}: AMP001`)"
            return kind, m.start(), None, f"`{shown}:` must be followed by rule codes (e.g. `{shown}: AMP001`)"
        tail = after[c.end():]
        word = _CODE_LIKE.match(tail)
        if word is not None:
            return kind, m.start(), None, f"`{word.group('word')}` is not a rule code (write e.g. `{shown}: AMP001`)"
        return kind, m.start(), c.group("codes"), None
    selector = _SELECTOR_LIKE.match(rest)
    if selector is not None and _CODE_LIKE.match(rest) is None and (rest[:1].isspace() or rest[:1] == ","):
        return kind, m.start(), None, (f"`{selector.group('word')}` is not a rule code: write `{shown}` (every code) "
                                       f"or `{shown}: AMP001`")
    word = _CODE_LIKE.match(rest)
    if word is not None and (rest[:1].isspace() or rest[:1] == ","):
        return kind, m.start(), None, (f"a `:` is missing before `{word.group('word')}` (write `{shown}: "
                                       f"{word.group('word')}`)")
    if rest[:1] in (",", ";") or _OTHER_SEPARATOR.match(rest):
        return kind, m.start(), None, f"write `{shown}: CODES`"
    return kind, m.start(), None, None


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
    invalid: list[tuple[int, int, str]] = field(default_factory=list)  # (row, col, why): they suppress nothing

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
    # rows as Python counts them: a lone ``\r`` ends a line too (``io.StringIO`` splits at ``\n``
    # only, which put every directive after a ``\r`` line ending on the wrong row)
    text = source.replace("\r\n", "\n").replace("\r", "\n") if "\r" in source else source
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
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
    invalid: list[tuple[int, int, str]] = []
    if "noqa" not in source.lower():
        return NoqaMap({}, False, frozenset(), [])
    for row, col, text in comments(source):
        kind, offset, codes_text, error = _check_directive(text)
        if kind is None:
            continue
        if error is not None:
            invalid.append((row, col + offset, error))
            continue
        codes = _split(codes_text)
        if kind == "file":
            d = NoqaDirective(row, codes, text, col=col)
            file_directives.append(d)
            if codes is None:
                file_all = True
            else:
                file_codes |= codes
        else:
            lines[row] = NoqaDirective(row, codes, text, col=col + offset)
    return NoqaMap(lines, file_all, frozenset(file_codes), file_directives, invalid)


def invalid_warnings(noqa: NoqaMap, name: str) -> list[str]:
    return [f"{name}:{row}:{col}: invalid noqa directive, it suppresses nothing: {why}" for row, col, why in noqa.invalid]
