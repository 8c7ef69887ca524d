"""Findings with the source lines around them and the fix's title (ruff's ``full``)."""

from __future__ import annotations

from . import headline, style
from ..lines import split_lines
from ..printable import printable

CONTEXT = 2


def render(diagnostics, ctx) -> str:
    out = []
    cache: dict[tuple[str, int | None], list[str] | None] = {}
    for d in diagnostics:
        out.append(headline(d, ctx) + "\n")
        key = (d.filename, d.cell)  # a notebook's cells are separate texts
        if key not in cache:
            text = ctx.read_source(d.filename, d.cell) if ctx.read_source is not None else None
            cache[key] = split_lines(text) if text is not None else None
        lines = cache[key]
        if lines and d.location.row <= len(lines):
            out.append(_snippet(lines, d, ctx))
        if d.fix is not None:
            out.append(f"  = help: {printable(d.fix.message)}\n")
        out.append("\n")
    return "".join(out)


def _show(line: str) -> str:
    return printable(line.expandtabs(4))


def _snippet(lines: list[str], d, ctx=None) -> str:
    first = max(1, d.location.row - CONTEXT)
    last = min(len(lines), d.end_location.row + CONTEXT)
    width = len(str(last))
    pad = " " * width
    parts = [f"{pad} |\n"]
    for row in range(first, last + 1):
        raw = lines[row - 1].rstrip("\r\n") if row - 1 < len(lines) else ""
        text = _show(raw)
        parts.append(f"{row:>{width}} | {text}\n")
        if d.location.row <= row <= d.end_location.row:
            # columns of the raw line, placed where the shown (tab-expanded, escaped) text has them
            def col(c: int) -> int:
                return len(_show(raw[: max(c, 1) - 1])) + 1

            start = col(d.location.column) if row == d.location.row else 1 + len(text) - len(text.lstrip())
            end = col(d.end_location.column) if row == d.end_location.row else len(text) + 1
            carets = max(1, end - start)
            label = f" {d.code}" if row == d.end_location.row else ""
            parts.append(f"{pad} | {' ' * (start - 1)}{style('^' * carets + label, ctx, fg='red', bold=True)}\n")
    parts.append(f"{pad} |\n")
    return "".join(parts)
