"""Output formats; one module per format, each a ``render(diagnostics, ctx) -> str``."""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field

from ..diagnostics import Diagnostic

FORMATS = ("concise", "full", "json", "json-lines", "github", "sarif")


@dataclass
class RenderContext:
    show_fixes: bool = True
    unsafe_fixes: bool = False
    fix_mode: bool = False
    fixed_count: int = 0
    read_source: object = None  # callable(filename) -> str | None, for the full format
    rules: list = field(default_factory=list)


def render(fmt: str, diagnostics: list[Diagnostic], ctx: RenderContext) -> str:
    module = importlib.import_module(f".{fmt.replace('-', '_')}", __name__)
    return module.render(diagnostics, ctx)


def display_location(d: Diagnostic) -> str:
    if d.cell is not None:
        return f"{d.filename}:cell {d.cell}:{d.location.row}:{d.location.column}"
    return f"{d.filename}:{d.location.row}:{d.location.column}"


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
