"""Jupyter notebooks: lint the code cells as one module, report per cell, fix in place.

Reading. The JSON is parsed strictly (a duplicate key anywhere is an AMP000: which value a tool
takes is not defined), and the position of every code cell's ``source`` in the file is kept.
Each cell is split into lines exactly as Python splits a file (``\\r\\n``, ``\\r`` and ``\\n``
end a line; a form feed, ``\\v`` or U+2028 does not), so a cell reads like the same code in a
``.py`` file. A cell that is not valid nbformat (not an object, no known ``cell_type``, a
``source`` that is not text) is an AMP000 on that cell; the other cells are still linted.

Code cells are concatenated (a scaler made in cell 2 is the one the loop of cell 3 steps),
separated by a boundary comment. IPython syntax (``%magic``, ``!shell``, ``x = !cmd``,
``obj?``) is replaced by a same-line placeholder so the code still parses and line numbers
stay put; cells that start with a cell magic other than the Python ones (``%%time``,
``%%capture``...) are skipped. Cells are numbered as the notebook shows them (1-based, all
cells counted).

Fixing. The fixed module is split back into cells; in each cell only the lines the fixes changed
are replaced (the others keep their own line endings, magics and trailing blank lines), and in
the file only the changed cells' ``source`` values are rewritten: every other byte of the JSON
(layout, escapes, other cells, outputs) stays as it was. The edits in a notebook finding's fix
are in the cell's own coordinates and, applied to the cell's source, give what ``--fix`` writes.
"""

from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass, field

from .diagnostics import Diagnostic, Edit, Fix, Location
from .engine import FileResult, Linter, Source
from .lines import split_lines

# Cell boundaries and magic placeholders carry a token that occurs nowhere in the notebook,
# so a user's own comment that looks like one is never taken for one.
BOUNDARY = "# amplint: cell boundary {token} {index}"
_PLACEHOLDER = "pass  # amplint: magic {token} {id}"
PYTHON_CELL_MAGICS = {"time", "timeit", "capture", "prun", "debug", "python", "python3", "pypy"}
CELL_TYPES = ("code", "markdown", "raw")
_MAGIC_LINE = re.compile(r"^(\s*)(%{1,2}|!{1,2})")
_ASSIGN_MAGIC = re.compile(r"^(\s*)([A-Za-z_][A-Za-z0-9_]*)\s*=\s*[%!]")
_HELP = re.compile(r"^\s*[\w.]+\?{1,2}\s*$|^\s*\?{1,2}[\w.]+\s*$")
_WS = re.compile(r"[ \t\n\r]*")


class NotebookError(Exception):
    pass


@dataclass
class Cell:
    index: int  # 1-based, among all cells
    source: str  # original cell source
    start_row: int  # first row of this cell in the concatenated module
    n_rows: int
    lines: list[str] = field(default_factory=list)  # the lines as analysed (magics as placeholders)
    raw: list[tuple[str, str]] = field(default_factory=list)  # the original lines: (text, line ending)


@dataclass
class Span:
    """Where a code cell's ``source`` value lies in the decoded JSON text."""

    start: int
    end: int
    items: list[tuple[int, int]] | None  # each string of a list value (None: a single string)


@dataclass
class Prepared:
    nb: dict
    cells: list[Cell]
    text: str
    magics: dict[int, str]  # placeholder id -> original line
    indent: int | str | None
    token: str = ""
    raw: str = ""  # the decoded JSON text
    bom: bool = False
    spans: dict[int, Span] = field(default_factory=dict)  # cell index -> its source's span
    invalid: list[tuple[int, str]] = field(default_factory=list)  # (cell index, why)
    starts: list[int] = field(default_factory=list)  # start_row of each cell, for bisect

    def locate(self, row: int) -> tuple[Cell, int] | None:
        k = bisect.bisect_right(self.starts, row) - 1
        if k < 0:
            return None
        c = self.cells[k]
        if c.start_row <= row < c.start_row + max(c.n_rows, 1):
            return c, row - c.start_row + 1
        return None


# --- strict JSON with positions ---------------------------------------------------------------


def _no_duplicates(pairs: list) -> dict:
    out: dict = {}
    for k, v in pairs:
        if k in out:
            raise NotebookError(f"not a valid notebook: duplicate key `{k}` in an object")
        out[k] = v
    return out


def _parse_int(text: str):
    """A JSON integer; one too long for ``int()`` (over 4,300 digits, say in a cell's metadata)
    stays text: nothing amplint reads is such a number."""
    try:
        return int(text)
    except ValueError:
        return text


_DECODER = json.JSONDecoder(object_pairs_hook=_no_duplicates, parse_int=_parse_int)


class _Parser:
    """The notebook's top-level object and its cells walked by hand (for positions and duplicate
    keys); every other value decoded by the json module (C speed)."""

    def __init__(self, raw: str) -> None:
        self.raw = raw
        self.spans: dict[int, Span] = {}

    def ws(self, i: int) -> int:
        return _WS.match(self.raw, i).end()

    def value(self, i: int):
        try:
            return _DECODER.raw_decode(self.raw, i)
        except ValueError as e:  # (JSONDecodeError is one)
            raise NotebookError(f"not a valid notebook (JSON): {e}") from None

    def expect(self, i: int, ch: str) -> int:
        if i >= len(self.raw) or self.raw[i] != ch:
            where = f"`{self.raw[i]}`" if i < len(self.raw) else "the end"
            raise NotebookError(f"not a valid notebook (JSON): expected `{ch}` at offset {i}, found {where}")
        return i + 1

    def key(self, i: int) -> tuple[str, int]:
        i = self.expect(i, '"')
        try:
            return json.decoder.scanstring(self.raw, i)
        except json.JSONDecodeError as e:
            raise NotebookError(f"not a valid notebook (JSON): {e}") from None

    def members(self, i: int, on_value):
        """Walk an object at ``i``: ``on_value(key, start)`` parses each value and returns
        (value, end). Returns (dict, end)."""
        i = self.ws(self.expect(i, "{"))
        out: dict = {}
        if i < len(self.raw) and self.raw[i] == "}":
            return out, i + 1
        while True:
            k, i = self.key(self.ws(i))
            i = self.ws(self.expect(self.ws(i), ":"))
            if k in out:
                raise NotebookError(f"not a valid notebook: duplicate key `{k}`")
            out[k], i = on_value(k, i)
            i = self.ws(i)
            if i < len(self.raw) and self.raw[i] == ",":
                i = self.ws(i + 1)
                continue
            return out, self.expect(i, "}")

    def top(self) -> dict:
        i = self.ws(0)

        def top_value(k, i):
            if k == "cells" and i < len(self.raw) and self.raw[i] == "[":
                return self.cells(i)
            return self.value(i)

        nb, end = self.members(i, top_value)
        if self.ws(end) != len(self.raw):
            raise NotebookError(f"not a valid notebook (JSON): extra data at offset {self.ws(end)}")
        return nb

    def cells(self, i: int):
        i = self.ws(self.expect(i, "["))
        out: list = []
        if i < len(self.raw) and self.raw[i] == "]":
            return out, i + 1
        while True:
            index = len(out) + 1
            if self.raw.startswith("{", i):
                def cell_value(k, j, index=index):
                    v, end = self.value(j)
                    if k == "source":
                        items = self._items(j, end) if isinstance(v, list) else None
                        self.spans[index] = Span(j, end, items)
                    return v, end

                cell, i = self.members(i, cell_value)
            else:
                cell, i = self.value(i)
            out.append(cell)
            i = self.ws(i)
            if i < len(self.raw) and self.raw[i] == ",":
                i = self.ws(i + 1)
                continue
            return out, self.expect(i, "]")

    def _items(self, start: int, end: int) -> list[tuple[int, int]] | None:
        """The spans of the strings of a list value."""
        items = []
        i = self.ws(start + 1)
        while i < end and self.raw[i] != "]":
            if self.raw[i] != '"':
                return None
            _v, j = self.value(i)
            items.append((i, j))
            i = self.ws(j)
            if i < end and self.raw[i] == ",":
                i = self.ws(i + 1)
        return items


# --- reading ----------------------------------------------------------------------------------


def _cell_source(cell: dict) -> str:
    src = cell.get("source", "")
    if isinstance(src, list):
        if not all(isinstance(x, str) for x in src):
            raise NotebookError("not a valid notebook: a cell's `source` holds something other than text")
        return "".join(src)
    if not isinstance(src, str):
        raise NotebookError("not a valid notebook: a cell's `source` is not text")
    return src


def _invalid_cell(cell) -> str | None:
    """Why a cell is not valid nbformat 4 (None: it is)."""
    if not isinstance(cell, dict):
        return "a cell must be a JSON object"
    kind = cell.get("cell_type")
    if not isinstance(kind, str):
        return "a cell needs a `cell_type`"
    if kind not in CELL_TYPES:
        return f"unknown `cell_type` {kind!r} (expected code, markdown or raw)"
    if "source" not in cell:
        return "a cell needs a `source`"
    src = cell["source"]
    if isinstance(src, list):
        if not all(isinstance(x, str) for x in src):
            return "the cell's `source` holds something other than text"
    elif not isinstance(src, str):
        return "the cell's `source` is not text"
    if "metadata" in cell and not isinstance(cell["metadata"], dict):
        return "the cell's `metadata` is not an object"
    return None


def _token(raw: str) -> str:
    import zlib

    n = zlib.crc32(raw.encode("utf-8", "surrogatepass"))
    while True:
        token = f"x{n:08x}"
        if token not in raw:
            return token
        n += 1


def _detect_indent(raw: str) -> int | str | None:
    lines = raw.splitlines()
    if len(lines) < 2:
        return None
    second = lines[1]
    n = len(second) - len(second.lstrip(" "))
    if second.startswith("\t"):
        return "\t"
    return n or None


def _raw_lines(source: str) -> list[tuple[str, str]]:
    out = []
    for line in split_lines(source, keepends=True):
        body = line.rstrip("\r\n")
        out.append((body, line[len(body):]))
    return out


def prepare(data: bytes) -> Prepared:
    bom = data.startswith(b"\xef\xbb\xbf")
    try:
        raw = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise NotebookError(f"not a valid notebook: not UTF-8 ({e.reason} at byte {e.start})") from None
    parser = _Parser(raw)
    try:
        nb = parser.top()
    except RecursionError:
        raise NotebookError("not a valid notebook: JSON nested too deeply") from None
    if not isinstance(nb.get("cells"), list):
        if "worksheets" in nb:
            raise NotebookError("not a supported notebook: nbformat 3 (worksheets); convert it with `jupyter nbconvert --to notebook`")
        raise NotebookError("not a valid notebook: no `cells` list")
    major = nb.get("nbformat")
    if isinstance(major, int) and not isinstance(major, bool) and major < 4:
        raise NotebookError(f"not a supported notebook: nbformat {major}")
    metadata = nb.get("metadata")
    info = metadata.get("language_info") if isinstance(metadata, dict) else None
    lang = info.get("name", "python") if isinstance(info, dict) else "python"
    if isinstance(lang, str) and lang.lower() not in ("python", "python3", ""):
        raise NotebookError(f"not a Python notebook (language `{lang}`)")
    parts: list[str] = []
    cells: list[Cell] = []
    magics: dict[int, str] = {}
    invalid: list[tuple[int, str]] = []
    token = _token(raw)
    row = 1
    for i, cell in enumerate(nb["cells"], 1):
        why = _invalid_cell(cell)
        if why is not None:
            invalid.append((i, why))
            continue
        if cell.get("cell_type") != "code":
            continue
        source = _cell_source(cell)
        raw_lines = _raw_lines(source)
        lines = [text for text, _end in raw_lines]
        if lines and lines[0].startswith("%%"):
            words = lines[0][2:].split(None, 1)
            name = words[0] if words else ""
            if name not in PYTHON_CELL_MAGICS:
                continue
        body: list[str] = []
        for j, line in enumerate(lines):
            if j == 0 and line.startswith("%%"):
                body.append(_placeholder(line, magics, token, ""))
                continue
            m = _ASSIGN_MAGIC.match(line)
            if m is not None:
                body.append(_placeholder(line, magics, token, m.group(1), m.group(2)))
            elif _MAGIC_LINE.match(line) or _HELP.match(line):
                body.append(_placeholder(line, magics, token, line[: len(line) - len(line.lstrip())]))
            else:
                body.append(line)
        text = "".join(line + "\n" for line in body)
        parts.append(BOUNDARY.format(token=token, index=i) + "\n" + text)
        cells.append(Cell(i, source, row + 1, len(body), body, raw_lines))
        row += 1 + len(body)
    text = "".join(parts)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise NotebookError("not a valid notebook: a cell holds a lone surrogate (not encodable text)") from None
    return Prepared(nb, cells, text, magics, _detect_indent(raw), token, raw, bom, parser.spans, invalid,
                    [c.start_row for c in cells])


def _placeholder(line: str, magics: dict[int, str], token: str, indent: str, target: str | None = None) -> str:
    ident = len(magics) + 1
    magics[ident] = line
    if target is not None:
        return f"{indent}{target} = None  # amplint: magic {token} {ident}"
    return f"{indent}" + _PLACEHOLDER.format(token=token, id=ident)


# --- findings in cell coordinates -------------------------------------------------------------


def _map(prep: Prepared, d: Diagnostic) -> Diagnostic:
    hit = prep.locate(d.location.row)
    if hit is None:
        return d
    cell, row = hit
    end_hit = prep.locate(d.end_location.row)
    end_row = end_hit[1] if end_hit is not None and end_hit[0] is cell else row
    end_col = d.end_location.column if end_hit is not None and end_hit[0] is cell else len(cell.lines[row - 1]) + 1
    noqa = row if d.noqa_row is not None else None
    fix = _cell_fix(prep, cell, d.fix) if d.fix is not None else None
    return d._replace(
        cell=cell.index,
        location=Location(row, d.location.column),
        end_location=Location(end_row, end_col),
        noqa_row=noqa,
        fix=fix,
    )


def _cell_text_edits(prep: Prepared, cell: Cell, edits) -> list[str] | None:
    """The cell's analysed lines after ``edits`` (module coordinates); None when an edit leaves
    the cell."""
    from .fixer import apply_edits

    first, stop = cell.start_row, cell.start_row + cell.n_rows
    local = []
    for e in edits:
        for loc in (e.location, e.end_location):
            if not (first <= loc.row < stop or (loc.row == stop and loc.column == 1)):
                return None
        local.append(Edit(e.content, Location(e.location.row - first + 1, e.location.column),
                          Location(e.end_location.row - first + 1, e.end_location.column)))
    text = "".join(line + "\n" for line in cell.lines)
    new = apply_edits(text, local)
    if not new.endswith("\n"):
        return None
    return new[:-1].split("\n")


def _dominant_ending(cell: Cell) -> str:
    from collections import Counter

    counts = Counter(end for _t, end in cell.raw if end)
    return counts.most_common(1)[0][0] if counts else "\n"


def _rebuild(prep: Prepared, cell: Cell, new_lines: list[str]) -> str:
    """The cell's new source: lines the fixes did not change keep their original text and line
    ending; changed and added lines take the cell's usual ending; a cell without a final newline
    keeps having none."""
    import difflib

    placeholder = re.compile(rf"^(\s*)(?:pass|(\w+) = None)  # amplint: magic {re.escape(prep.token)} (\d+)$")
    nl = _dominant_ending(cell)
    out: list[list[str]] = []
    matcher = difflib.SequenceMatcher(None, cell.lines, new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            out.extend([list(cell.raw[i]) for i in range(i1, i2)])
            continue
        for k, j in enumerate(range(j1, j2)):
            text = new_lines[j]
            m = placeholder.match(text)
            if m is not None and int(m.group(3)) in prep.magics:
                text = prep.magics[int(m.group(3))]
            old = i1 + k
            out.append([text, cell.raw[old][1] if old < i2 and cell.raw[old][1] else nl])
    for line in out[:-1]:
        if not line[1]:
            line[1] = nl
    if out:
        ends_open = bool(cell.raw) and cell.raw[-1][1] == ""
        if ends_open:
            out[-1][1] = ""
        elif not out[-1][1]:
            out[-1][1] = nl
    return "".join(text + end for text, end in out)


def _offset_edits(old: str, new: str) -> tuple[Edit, ...]:
    """Line-level edits that turn ``old`` into ``new`` (1-based rows and columns of ``old``)."""
    import difflib

    a = split_lines(old, keepends=True)
    b = split_lines(new, keepends=True)

    def loc(i: int) -> Location:
        if i < len(a):
            return Location(i + 1, 1)
        if a and not a[-1].endswith(("\n", "\r")):  # the end of a text without a final newline
            return Location(len(a), len(a[-1]) + 1)
        return Location(len(a) + 1, 1)

    edits = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag != "equal":
            edits.append(Edit("".join(b[j1:j2]), loc(i1), loc(i2)))
    return tuple(edits)


def _cell_fix(prep: Prepared, cell: Cell, fix: Fix) -> Fix | None:
    new_lines = _cell_text_edits(prep, cell, fix.edits)
    if new_lines is None:
        return None
    new = _rebuild(prep, cell, new_lines)
    edits = _offset_edits(cell.source, new)
    return fix._replace(edits=edits) if edits else None


def check_notebook(linter: Linter, data: bytes, name: str) -> FileResult:
    return _check(linter, data, name)[0]


def _check(linter: Linter, data: bytes, name: str) -> tuple[FileResult, Prepared | None, FileResult | None]:
    from .engine import _syntax_diag

    try:
        prep = prepare(data)
    except NotebookError as e:
        return FileResult(name, diagnostics=[_syntax_diag(name, str(e), 1, 1)]), None, None
    result = FileResult(name)
    invalid = [_syntax_diag(name, f"not a valid notebook cell: {why}", 1, 1)._replace(cell=i, noqa_row=None)
               for i, why in prep.invalid]
    raw = prep.text.encode("utf-8")
    if not linter.prefilter(raw):
        result.diagnostics = invalid
        return result, prep, None
    src = Source(prep.text, "utf-8", "\n", False)
    inner = linter.check_source(src, name, raw)
    if any(d.code == "AMP000" for d in inner.diagnostics):
        text, broken = _without_broken_cells(prep, name)
        if broken:
            inner = linter.check_source(Source(text, "utf-8", "\n", False), name, text.encode("utf-8"))
            # (the fixes are computed on the notebook as it is: with a broken cell, none is offered)
            inner.diagnostics = broken + [d._replace(fix=None) if d.fix is not None else d for d in inner.diagnostics]
    result.analysed = inner.analysed
    result.errors = inner.errors
    result.warnings = inner.warnings
    result.diagnostics = invalid + [_map(prep, d) for d in inner.diagnostics]
    result.source = src
    return result, prep, inner


def _without_broken_cells(prep: Prepared, name: str) -> tuple[str, list[Diagnostic]]:
    """The module text with the cells that are not Python on their own blanked (rows kept), and
    their AMP000s: Jupyter runs each cell alone, so one broken cell does not hide the findings of
    the others. Nothing is blanked when the whole module compiles (read only after the
    notebook's analysis reported an AMP000)."""
    from .engine import _cpython_parse

    if _cpython_parse(prep.text, name)[1] is None:
        return prep.text, []
    lines = prep.text.split("\n")
    diags = []
    for cell in prep.cells:
        body = "".join(line + "\n" for line in cell.lines)
        err = _cpython_parse(body, name)[1]
        if err is None:
            continue
        diags.append(err._replace(location=Location(err.location.row + cell.start_row - 1, err.location.column),
                                  end_location=Location(err.location.row + cell.start_row - 1, err.location.column)))
        for r in range(cell.start_row, cell.start_row + cell.n_rows):
            lines[r - 1] = ""
    return ("\n".join(lines), diags) if diags else (prep.text, [])


def cell_source(data: bytes, cell: int) -> str | None:
    try:
        nb = json.loads(data.decode("utf-8-sig"), parse_int=_parse_int)
        return _cell_source(nb["cells"][cell - 1])
    except (ValueError, KeyError, IndexError, TypeError, AttributeError, UnicodeDecodeError, RecursionError,
            NotebookError):
        return None


# --- fixing -----------------------------------------------------------------------------------


def _split_cells(prep: Prepared, text: str) -> dict[int, list[str]]:
    """The fixed module's lines per cell (the analysed form: placeholders, ``\\n`` endings)."""
    out: dict[int, list[str]] = {}
    current: int | None = None
    boundary = re.compile(rf"^# amplint: cell boundary {re.escape(prep.token)} (\d+)$")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for line in lines:
        m = boundary.match(line)
        if m is not None:
            current = int(m.group(1))
            out[current] = []
        elif current is not None:
            out[current].append(line)
    return out


def _ensure_ascii(raw: str) -> bool:
    """Whether the file writes non-ASCII text as ``\\uXXXX`` escapes (Jupyter does not)."""
    return raw.isascii() and "\\u" in raw


def _source_value(prep: Prepared, index: int, new: str) -> str | None:
    """The JSON text of cell ``index``'s new ``source``, in the style of the old one: a list
    keeps its layout, and its unchanged strings keep their exact original text."""

    span = prep.spans.get(index)
    if span is None:
        return None
    ascii_only = _ensure_ascii(prep.raw)
    old_value = prep.raw[span.start:span.end]
    if span.items is None:
        if not old_value.startswith('"'):
            return None
        return json.dumps(new, ensure_ascii=ascii_only)
    old_items = [prep.raw[s:e] for s, e in span.items]
    old_strings = [json.loads(t) for t in old_items]
    tokens = _list_tokens(old_items, old_strings, new, ascii_only)
    if span.items:
        opening = prep.raw[span.start + 1:span.items[0][0]]
        closing = prep.raw[span.items[-1][1]:span.end - 1]
        sep = prep.raw[span.items[0][1]:span.items[1][0]] if len(span.items) > 1 else "," + opening
    else:
        line_start = prep.raw.rfind("\n", 0, span.start) + 1
        key_indent = re.match(r"[ \t]*", prep.raw[line_start:]).group(0)
        unit = prep.indent if isinstance(prep.indent, str) else " " * (prep.indent or 1)
        opening, closing = "\n" + key_indent + unit, "\n" + key_indent
        sep = "," + opening
    if not tokens:
        return "[]"
    return "[" + opening + sep.join(tokens) + closing + "]"


def _hunks(old: str, new: str) -> list[tuple[int, int, int, int]]:
    """The changed regions, line by line: (old start, old end, new start, new end) offsets."""
    import difflib

    a = split_lines(old, keepends=True)
    b = split_lines(new, keepends=True)
    ao, bo = [0], [0]
    for line in a:
        ao.append(ao[-1] + len(line))
    for line in b:
        bo.append(bo[-1] + len(line))
    return [(ao[i1], ao[i2], bo[j1], bo[j2])
            for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes() if tag != "equal"]


def _list_tokens(old_items: list[str], old_strings: list[str], new: str, ascii_only: bool) -> list[str]:
    """The JSON strings of a list ``source`` after the change: every string that holds no
    changed text stays as it was (escapes and all); the strings around a change are replaced by
    the new text, split the way those strings were (one per line, as Jupyter writes them, or one
    string for several lines)."""
    old = "".join(old_strings)
    starts = [0]
    for t in old_strings:
        starts.append(starts[-1] + len(t))
    tokens: list[str] = []
    k = 0  # the next old string to place
    n = len(old_strings)
    for a1, a2, b1, b2 in _hunks(old, new):
        if a1 == a2 and a1 in starts[k:]:
            first = last = starts.index(a1, k)  # an insertion at a string boundary: nothing replaced
        else:
            first = max(k, bisect.bisect_right(starts, a1) - 1)  # the string holding a1
            last = max(first + 1, bisect.bisect_left(starts, a2))  # strings up to the one holding a2
            first, last = min(first, n), min(last, n)
        tokens.extend(old_items[k:first])
        lo, hi = starts[first], starts[last]
        text = old[lo:a1] + new[b1:b2] + old[a2:hi]
        multi = any(len(split_lines(t)) > 1 for t in old_strings[first:last])
        pieces = [text] if multi else text.splitlines(keepends=True)
        tokens.extend(json.dumps(p, ensure_ascii=ascii_only) for p in pieces if p)
        k = last
    tokens.extend(old_items[k:])
    return tokens


def _below(loc: Location, lo: int, hi: int) -> bool:
    """``loc`` lies between the boundary lines at rows ``lo`` and ``hi``, or at the very start of
    the one at ``hi``."""
    return lo < loc.row < hi or (loc.row == hi and loc.column == 1)


def fix_notebook(linter: Linter, c, snap, *, unsafe: bool, diff: bool, add_noqa: bool) -> FileResult:
    """``--fix`` / ``--diff`` / ``--add-noqa`` on the notebook read as ``snap``
    (:class:`amplint.safeio.Snapshot`): the code cells are edited as one module, only the changed
    cells' ``source`` values are rewritten, the file is written with the ``--fix`` write protocol,
    and the findings that remain are those of the notebook as written (rows counted in its new
    cells)."""
    from . import safeio
    from .fixer import _is_syntax_error, _left_alone, add_noqa_source, fix_source

    name = c.name
    first, prep, inner_first = _check(linter, snap.data, name)
    if first.source is None or prep is None or inner_first is None or _is_syntax_error(first):
        return first
    src = first.source

    boundary = re.compile(rf"^# amplint: cell boundary {re.escape(prep.token)} \d+$", re.M)
    seen: dict[int, tuple[str, list[int]]] = {}

    def in_its_cell(d: Diagnostic, text: str) -> bool:
        # a fix is applied only if its edits stay in the finding's cell: then the edits that the
        # JSON output gives in cell coordinates are exactly what --fix writes
        hit = seen.get(id(text))
        if hit is None or hit[0] is not text:
            rows = [text.count("\n", 0, m.start()) + 1 for m in boundary.finditer(text)]
            hit = seen[id(text)] = (text, rows)
        rows = hit[1]
        k = bisect.bisect_right(rows, d.location.row)
        lo = rows[k - 1] if k > 0 else 0
        hi = rows[k] if k < len(rows) else 1 << 60
        # (the start of the next cell's boundary line is the end of this cell: an insertion there,
        # such as a ``scaler.update()`` after a loop that ends the cell, stays in it)
        return d.fix is not None and all(
            _below(e.location, lo, hi) and _below(e.end_location, lo, hi) for e in d.fix.edits)

    if add_noqa:
        text, n = add_noqa_source(linter, src, name, inner_first)
    else:
        text, _inner_result, n = fix_source(linter, src, name, inner_first, unsafe, keep=in_its_cell)
    result = FileResult(name, analysed=True, fixes_applied=n, warnings=list(first.warnings))
    if text == prep.text:
        result.diagnostics = first.diagnostics
        result.fixes_applied = 0
        return result
    fixed_cells = _split_cells(prep, text)
    replacements: list[tuple[int, int, str]] = []
    for cell in prep.cells:
        lines = fixed_cells.get(cell.index)
        if lines is None or lines == cell.lines:
            continue
        new = _rebuild(prep, cell, lines)
        if new == cell.source:
            continue
        value = _source_value(prep, cell.index, new)
        if value is None:
            return first  # no position for the source: nothing is written
        span = prep.spans[cell.index]
        replacements.append((span.start, span.end, value))
    if not replacements:
        result.diagnostics = first.diagnostics
        result.fixes_applied = 0
        return result
    out = prep.raw
    for start, end, value in sorted(replacements, reverse=True):
        out = out[:start] + value + out[end:]
    result.source = Source(prep.raw, "utf-8", "\n", False)
    result.fixed_text = out
    if diff:
        result.diagnostics = first.diagnostics
        return result
    data = (b"\xef\xbb\xbf" if prep.bom else b"") + out.encode("utf-8")
    after = check_notebook(linter, data, name)
    result.diagnostics = after.diagnostics
    result.warnings = after.warnings
    result.errors = after.errors
    try:
        safeio.replace_file(snap, data)
    except safeio.FileChanged as e:
        return _left_alone(linter, c, e.reason)
    except OSError as e:
        first.errors.append(f"{name}: cannot write the fixes: {e.strerror or e}")
        return first
    return result
