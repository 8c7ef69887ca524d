"""Output formats; one module per format, each a ``render(diagnostics, ctx) -> str``."""

from __future__ import annotations

import importlib

from .._record import Factory, Record
from ..diagnostics import Diagnostic
from ..printable import printable

FORMATS = ("concise", "full", "json", "json-lines", "github", "sarif")


class RenderContext(Record):
    __slots__ = _fields = ("show_fixes", "unsafe_fixes", "fix_mode", "fixed_count", "read_source", "rules")
    _defaults = {"show_fixes": True, "unsafe_fixes": False, "fix_mode": False, "fixed_count": 0, "read_source": None,
                 "rules": Factory(list)}
    show_fixes: bool
    unsafe_fixes: bool
    fix_mode: bool
    fixed_count: int
    read_source: object  # callable(filename, cell) -> str | None, for the full format
    rules: list


def render(fmt: str, diagnostics: list[Diagnostic], ctx: RenderContext) -> str:
    module = importlib.import_module(f".{fmt.replace('-', '_')}", __name__)
    return module.render(diagnostics, ctx)


def display_location(d: Diagnostic) -> str:
    """``path:row:col`` (``path:cell N:row:col``), printable (see :mod:`amplint.printable`)."""
    name = printable(d.filename)
    if d.cell is not None:
        return f"{name}:cell {d.cell}:{d.location.row}:{d.location.column}"
    return f"{name}:{d.location.row}:{d.location.column}"


def fix_marker(d: Diagnostic, ctx: RenderContext) -> str:
    if d.fix is None:
        return ""
    if d.fix.applicability == "safe" or ctx.unsafe_fixes:
        return "[*] "
    return ""


def summary(diagnostics: list[Diagnostic], ctx: RenderContext) -> str:
    lines = []
    n = len(diagnostics)
    if ctx.fix_mode and ctx.fixed_count:
        fixed = ctx.fixed_count
        remaining = f", {n} remaining" if n else ""
        lines.append(f"Found {n + fixed} error{'s' if n + fixed != 1 else ''} ({fixed} fixed{remaining}).")
    elif n:
        lines.append(f"Found {n} error{'s' if n != 1 else ''}.")
    else:
        lines.append("All checks passed!")
    if n and ctx.show_fixes:
        safe = sum(1 for d in diagnostics if d.fix is not None and (d.fix.applicability == "safe" or ctx.unsafe_fixes))
        unsafe = sum(1 for d in diagnostics if d.fix is not None and d.fix.applicability == "unsafe" and not ctx.unsafe_fixes)
        if safe:
            lines.append(f"[*] {safe} fixable with the `--fix` option.")
        if unsafe:
            lines.append(
                f"{unsafe} hidden fix{'es' if unsafe != 1 else ''} can be enabled with the `--unsafe-fixes` option."
            )
    return "\n".join(lines)
