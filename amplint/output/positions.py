"""Where a finding is in the file on disk, for formats read by tools that know nothing of cells.

Findings in notebooks are reported per cell (``train.ipynb:cell 3:7:9``). GitHub annotations
and SARIF regions point into the raw ``.ipynb`` file instead: the line of the notebook's JSON
that holds the cell's line (nbformat writes each source line as one string of the cell's
``source`` list), and the column inside that string literal, escapes counted as written.
"""

from __future__ import annotations

import re

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_SCALAR = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null")
_WS = re.compile(r"\s*")
_ESCAPE = re.compile(r'\\(?:u[0-9a-fA-F]{4}|.)', re.S)


class _Scan:
    """A JSON scanner that records the offsets of the cells' ``source`` strings."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.sources: dict[int, list[int]] = {}  # 0-based cell index -> offsets of its literals

    def ws(self) -> None:
        self.pos = _WS.match(self.text, self.pos).end()

    def value(self, path: tuple) -> None:
        self.ws()
        c = self.text[self.pos:self.pos + 1]
        if c == "{":
            self.pos += 1
            self.ws()
            if self.text.startswith("}", self.pos):
                self.pos += 1
                return
            while True:
                self.ws()
                m = _STRING.match(self.text, self.pos)
                if m is None:
                    raise ValueError("bad key")
                import json

                key = json.loads(m.group(0))
                self.pos = m.end()
                self.ws()
                if not self.text.startswith(":", self.pos):
                    raise ValueError("no colon")
                self.pos += 1
                self.value(path + (key,))
                self.ws()
                if self.text.startswith(",", self.pos):
                    self.pos += 1
                    continue
                if self.text.startswith("}", self.pos):
                    self.pos += 1
                    return
                raise ValueError("bad object")
        elif c == "[":
            self.pos += 1
            self.ws()
            if self.text.startswith("]", self.pos):
                self.pos += 1
                return
            i = 0
            while True:
                self.value(path + (i,))
                i += 1
                self.ws()
                if self.text.startswith(",", self.pos):
                    self.pos += 1
                    continue
                if self.text.startswith("]", self.pos):
                    self.pos += 1
                    return
                raise ValueError("bad array")
        elif c == '"':
            m = _STRING.match(self.text, self.pos)
            if m is None:
                raise ValueError("bad string")
            if len(path) in (3, 4) and path[0] == "cells" and path[2] == "source" and isinstance(path[1], int):
                self.sources.setdefault(path[1], []).append(self.pos)
            self.pos = m.end()
        else:
            m = _SCALAR.match(self.text, self.pos)
            if m is None:
                raise ValueError("bad value")
            self.pos = m.end()


def _literal_chars(raw: str) -> list[tuple[int, str]]:
    """(offset in ``raw`` of the literal's body, decoded text) for each decoded character."""
    import json

    out: list[tuple[int, str]] = []
    i = 1
    end = len(raw) - 1
    while i < end:
        if raw[i] == "\\":
            m = _ESCAPE.match(raw, i)
            tok = m.group(0)
            j = m.end()
            # a surrogate pair is two escapes and one character
            if tok.startswith("\\u") and 0xD800 <= int(tok[2:], 16) < 0xDC00:
                m2 = _ESCAPE.match(raw, j)
                if m2 is not None and m2.group(0).startswith("\\u"):
                    tok += m2.group(0)
                    j = m2.end()
            try:
                ch = json.loads(f'"{tok}"')
            except ValueError:
                ch = "?"
            out.append((i, ch))
            i = j
        else:
            out.append((i, raw[i]))
            i += 1
    out.append((end, ""))  # the position just past the last character
    return out


class NotebookMap:
    def __init__(self, text: str) -> None:
        self.text = text
        scan = _Scan(text)
        scan.value(())
        self.sources = scan.sources
        self._line_starts: list[int] | None = None

    def _row_col(self, offset: int) -> tuple[int, int]:
        if self._line_starts is None:
            starts = [0]
            for m in re.finditer(r"\n", self.text):
                starts.append(m.end())
            self._line_starts = starts
        import bisect

        k = bisect.bisect_right(self._line_starts, offset) - 1
        return k + 1, offset - self._line_starts[k] + 1

    def locate(self, cell: int, row: int, column: int) -> tuple[int, int] | None:
        """The file's (line, column) of the cell's (row, column), all 1-based."""
        offsets = self.sources.get(cell - 1)
        if not offsets:
            return None
        line = 1
        for off in offsets:
            m = _STRING.match(self.text, off)
            chars = _literal_chars(m.group(0))
            col = 1
            for k, (rel, ch) in enumerate(chars):
                if line == row and col == column:
                    return self._row_col(off + rel)
                if ch == "\n":
                    if line == row:  # the column is past the line's end: its end
                        return self._row_col(off + rel)
                    line += 1
                    col = 1
                elif ch:
                    col += 1
            last_is_newline = len(chars) > 1 and chars[-2][1] == "\n"
            if line == row and column >= col and not last_is_newline and off == offsets[-1]:
                return self._row_col(off + chars[-1][0])  # past the end of the cell's last line
        return None


_MAPS: dict[str, NotebookMap | None] = {}


def notebook_map(filename: str) -> NotebookMap | None:
    if filename in _MAPS:
        return _MAPS[filename]
    nm = None
    try:
        from ..files import read_regular

        nm = NotebookMap(read_regular(filename).decode("utf-8-sig"))
    except (OSError, ValueError, UnicodeDecodeError, RecursionError, AttributeError):
        nm = None
    _MAPS[filename] = nm
    return nm


def file_region(d) -> tuple[tuple[int, int], tuple[int, int]]:
    """((line, column), (end line, end column)) of a finding in the file as stored."""
    start = (d.location.row, d.location.column)
    end = (d.end_location.row, d.end_location.column)
    if d.cell is None:
        return start, end
    nm = notebook_map(d.filename)
    if nm is None:
        return (1, 1), (1, 1)
    a = nm.locate(d.cell, *start)
    b = nm.locate(d.cell, *end)
    if a is None:
        return (1, 1), (1, 1)
    if b is None or b < a:
        b = a
    return a, b
