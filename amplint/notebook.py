"""Jupyter notebooks: lint the code cells as one module, report per cell, fix in place.

Code cells are concatenated (a scaler made in cell 2 is the one the loop of cell 3 steps),
separated by a boundary comment. IPython syntax (``%magic``, ``!shell``, ``x = !cmd``,
``obj?``) is replaced by a same-line placeholder so the code still parses and line numbers
stay put; cells that start with a cell magic other than the Python ones (``%%time``,
``%%capture``...) are skipped. Cells are numbered as the notebook shows them (1-based, all
cells counted). ``--fix`` rewrites only the edited cells' sources and keeps the file's JSON
layout.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from .diagnostics import Diagnostic, Location
from .engine import FileResult, Linter, Source
from .files import read_regular

# Cell boundaries and magic placeholders carry a token that occurs nowhere in the notebook,
# so a user's own comment that looks like one is never taken for one.
BOUNDARY = "# amplint: cell boundary {token} {index}"
_PLACEHOLDER = "pass  # amplint: magic {token} {id}"
PYTHON_CELL_MAGICS = {"time", "timeit", "capture", "prun", "debug", "python", "python3", "pypy"}
_MAGIC_LINE = re.compile(r"^(\s*)(%{1,2}|!{1,2})")
_ASSIGN_MAGIC = re.compile(r"^(\s*)([A-Za-z_][A-Za-z0-9_]*)\s*=\s*[%!]")
_HELP = re.compile(r"^\s*[\w.]+\?{1,2}\s*$|^\s*\?{1,2}[\w.]+\s*$")


class NotebookError(Exception):
    pass


@dataclass
class Cell:
    index: int  # 1-based, among all cells
    source: str  # original cell source
    start_row: int  # first row of this cell in the concatenated module
    n_rows: int


@dataclass
class Prepared:
    nb: dict
    cells: list[Cell]
    text: str
    magics: dict[int, str]  # placeholder id -> original line
    indent: int | str | None
    token: str = ""


def _cell_source(cell: dict) -> str:
    src = cell.get("source", "")
    if isinstance(src, list):
        if not all(isinstance(x, str) for x in src):
            raise NotebookError("not a valid notebook: a cell's `source` holds something other than text")
        return "".join(src)
    if not isinstance(src, str):
        raise NotebookError("not a valid notebook: a cell's `source` is not text")
    return src


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


def prepare(data: bytes) -> Prepared:
    try:
        raw = data.decode("utf-8-sig")
        nb = json.loads(raw)
    except (UnicodeDecodeError, ValueError) as e:
        raise NotebookError(f"not a valid notebook (JSON): {e}") from None
    except RecursionError:
        raise NotebookError("not a valid notebook: JSON nested too deeply") from None
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise NotebookError("not a valid notebook: no `cells` list")
    metadata = nb.get("metadata")
    info = metadata.get("language_info") if isinstance(metadata, dict) else None
    lang = info.get("name", "python") if isinstance(info, dict) else "python"
    if isinstance(lang, str) and lang.lower() not in ("python", "python3", ""):
        raise NotebookError(f"not a Python notebook (language `{lang}`)")
    parts: list[str] = []
    cells: list[Cell] = []
    magics: dict[int, str] = {}
    token = _token(raw)
    row = 1
    for i, cell in enumerate(nb["cells"], 1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = _cell_source(cell)
        lines = source.splitlines()
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
        cells.append(Cell(i, source, row + 1, len(body)))
        row += 1 + len(body)
    text = "".join(parts)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise NotebookError("not a valid notebook: a cell holds a lone surrogate (not encodable text)") from None
    return Prepared(nb, cells, text, magics, _detect_indent(raw), token)


def _placeholder(line: str, magics: dict[int, str], token: str, indent: str, target: str | None = None) -> str:
    ident = len(magics) + 1
    magics[ident] = line
    if target is not None:
        return f"{indent}{target} = None  # amplint: magic {token} {ident}"
    return f"{indent}" + _PLACEHOLDER.format(token=token, id=ident)


def _locate(prep: Prepared, row: int) -> tuple[Cell, int] | None:
    for c in prep.cells:
        if c.start_row <= row < c.start_row + max(c.n_rows, 1):
            return c, row - c.start_row + 1
    return None


def _map(prep: Prepared, d: Diagnostic) -> Diagnostic:
    hit = _locate(prep, d.location.row)
    if hit is None:
        return d
    cell, row = hit
    end_hit = _locate(prep, d.end_location.row)
    end_row = end_hit[1] if end_hit is not None and end_hit[0] is cell else row
    noqa = row if d.noqa_row is not None else None
    return d._replace(
        cell=cell.index,
        location=Location(row, d.location.column),
        end_location=Location(end_row, d.end_location.column),
        noqa_row=noqa,
        fix=None if d.fix is None else d.fix,
    )


def check_notebook(linter: Linter, data: bytes, name: str) -> FileResult:
    from .engine import _syntax_diag

    try:
        prep = prepare(data)
    except NotebookError as e:
        return FileResult(name, diagnostics=[_syntax_diag(name, str(e), 1, 1)])
    result = FileResult(name)
    raw = prep.text.encode("utf-8")
    if not linter.prefilter(raw):
        return result
    src = Source(prep.text, "utf-8", "\n", False)
    inner = linter.check_source(src, name, raw)
    result.analysed = inner.analysed
    result.errors = inner.errors
    result.warnings = inner.warnings
    result.diagnostics = [_map(prep, d) for d in inner.diagnostics]
    result.source = src
    return result


def cell_source(data: bytes, cell: int) -> str | None:
    try:
        nb = json.loads(data.decode("utf-8-sig"))
        return _cell_source(nb["cells"][cell - 1])
    except (ValueError, KeyError, IndexError, TypeError, AttributeError, UnicodeDecodeError, RecursionError,
            NotebookError):
        return None


def _restore(prep: Prepared, text: str) -> dict[int, str]:
    """Split a fixed concatenated module back into cell sources, putting the magics back."""
    out: dict[int, list[str]] = {}
    current: int | None = None
    token = re.escape(prep.token)
    boundary_re = re.compile(rf"^# amplint: cell boundary {token} (\d+)$")
    placeholder_re = re.compile(rf"^(\s*)(?:pass|(\w+) = None)  # amplint: magic {token} (\d+)$")
    for line in text.split("\n"):
        m = boundary_re.match(line)
        if m is not None:
            current = int(m.group(1))
            out[current] = []
            continue
        if current is None:
            continue
        pm = placeholder_re.match(line)
        if pm is not None and int(pm.group(3)) in prep.magics:
            line = prep.magics[int(pm.group(3))]
        out[current].append(line)
    sources = {}
    for index, lines in out.items():
        if lines and lines[-1] == "":
            lines = lines[:-1]
        sources[index] = "\n".join(lines)
    return sources


def _set_source(cell: dict, text: str) -> None:
    if isinstance(cell.get("source"), list):
        lines = text.splitlines(keepends=True)
        cell["source"] = lines
    else:
        cell["source"] = text


def fix_notebook(linter: Linter, path: Path, *, unsafe: bool, diff: bool, add_noqa: bool) -> FileResult:
    """``--fix`` / ``--diff`` / ``--add-noqa`` on a notebook: the code cells are edited as one
    module, written back cell by cell, and the findings that remain are those of the notebook
    as written (rows counted in its new cells)."""
    from .fixer import add_noqa_source, fix_source

    name = str(path)
    data = read_regular(path)
    first = check_notebook(linter, data, name)
    if first.source is None:
        return first
    prep = prepare(data)
    src = first.source
    inner_first = linter.check_source(src, name)
    if add_noqa:
        text, n = add_noqa_source(linter, src, name, inner_first)
    else:
        text, _inner_result, n = fix_source(linter, src, name, inner_first, unsafe)
    result = FileResult(name, analysed=True, fixes_applied=n)
    if text == prep.text:
        result.diagnostics = first.diagnostics
        result.fixes_applied = 0
        return result
    sources = _restore(prep, text)
    changed = False
    for cell in prep.cells:
        new = sources.get(cell.index)
        if new is None:
            continue
        original = cell.source
        trailing = "\n" if original.endswith("\n") else ""
        new = new + trailing if not new.endswith("\n") and trailing else new
        if new != original:
            _set_source(prep.nb["cells"][cell.index - 1], new)
            changed = True
    if not changed:
        result.diagnostics = first.diagnostics
        result.fixes_applied = 0
        return result
    indent = prep.indent if prep.indent is not None else 1
    out = json.dumps(prep.nb, indent=indent, ensure_ascii=False) + "\n"
    after = check_notebook(linter, out.encode("utf-8"), name)
    result.diagnostics = first.diagnostics if diff else after.diagnostics
    result.warnings = after.warnings
    result.errors = after.errors
    result.source = Source(data.decode("utf-8-sig"), "utf-8", "\n", False)
    result.fixed_text = out
    if not diff:
        from .fixer import write_atomic

        write_atomic(path, out, Source(out, "utf-8", "\n", data.startswith(b"\xef\xbb\xbf")))
    return result
