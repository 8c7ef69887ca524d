"""Output formats; one module per format, each a ``render(diagnostics, ctx) -> str``."""

from __future__ import annotations

import importlib

from .._record import Factory, Record
from ..diagnostics import Diagnostic
from ..printable import printable

FORMATS = ("concise", "full", "json", "json-lines", "github", "sarif")


class RenderContext(Record):
    __slots__ = _fields = ("show_fixes", "unsafe_fixes", "fix_mode", "fixed_count", "read_source", "rules", "color",
                           "baselined", "srcroot")
    _defaults = {"show_fixes": True, "unsafe_fixes": False, "fix_mode": False, "fixed_count": 0, "read_source": None,
                 "rules": Factory(list), "color": False, "baselined": 0, "srcroot": None}
    show_fixes: bool
    unsafe_fixes: bool
    fix_mode: bool
    fixed_count: int
    read_source: object  # callable(filename, cell) -> str | None, for the full format
    rules: list
    color: bool  # ANSI colours (--color)
    baselined: int  # findings hidden by --baseline
    srcroot: str | None  # SARIF: the folder relative URIs start from (default: the repository root)


def render(fmt: str, diagnostics: list[Diagnostic], ctx: RenderContext) -> str:
    module = importlib.import_module(f".{fmt.replace('-', '_')}", __name__)
    return module.render(diagnostics, ctx)


# One severity policy for every format (docs: README "Severity"):
#   error -> fails the run (exit 1); concise/full plain; github ::error; SARIF level "error";
#            JSON "severity": "error"; LSP Error
#   info  -> reported, does not fail the run; concise/full "[info]"; github ::notice;
#            SARIF level "note"; JSON "severity": "info"; LSP Information
FAILING_SEVERITIES = ("error", "warning")
GITHUB_KIND = {"error": "error", "warning": "warning", "info": "notice"}
SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def fails(d: Diagnostic) -> bool:
    return d.severity in FAILING_SEVERITIES


def style(text: str, ctx: "RenderContext | None", **kw) -> str:
    if ctx is None or not ctx.color:
        return text
    import click

    return click.style(text, **kw)


def display_location(d: Diagnostic, ctx: "RenderContext | None" = None) -> str:
    """``path:row:col`` (``path:cell N:row:col``), printable (see :mod:`amplint.printable`)."""
    sep = style(":", ctx, fg="cyan")
    name = style(printable(d.filename), ctx, bold=True)
    if d.cell is not None:
        return f"{name}{sep}cell {d.cell}{sep}{d.location.row}{sep}{d.location.column}"
    return f"{name}{sep}{d.location.row}{sep}{d.location.column}"


def code_text(d: Diagnostic, ctx: "RenderContext | None" = None) -> str:
    code = style(d.code, ctx, fg="blue" if not fails(d) else "red", bold=True)
    return f"{code} [info]" if d.severity == "info" else code


def fix_marker(d: Diagnostic, ctx: RenderContext) -> str:
    if d.fix is None:
        return ""
    if d.fix.applicability == "safe" or ctx.unsafe_fixes:
        return style("[*]", ctx, fg="cyan") + " "
    return ""


def headline(d: Diagnostic, ctx: RenderContext) -> str:
    """``path:row:col: CODE [*] message`` (concise and full), printable."""
    return f"{display_location(d, ctx)}{style(':', ctx, fg='cyan')} {code_text(d, ctx)} {fix_marker(d, ctx)}{printable(d.message)}"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def _count(diagnostics: list[Diagnostic]) -> str:
    errors = sum(1 for d in diagnostics if fails(d))
    info = len(diagnostics) - errors
    if not info:
        return _plural(errors, "error")
    if not errors:
        return _plural(info, "info finding")
    return f"{_plural(errors, 'error')} and {_plural(info, 'info finding')}"


def summary(diagnostics: list[Diagnostic], ctx: RenderContext) -> str:
    lines = []
    n = len(diagnostics)
    info_only = n and not any(fails(d) for d in diagnostics)
    if ctx.fix_mode and ctx.fixed_count:
        fixed = ctx.fixed_count
        if any(not fails(d) for d in diagnostics):
            lines.append(f"Found {_plural(n + fixed, 'finding')} ({fixed} fixed, {_count(diagnostics)} remaining).")
        else:
            remaining = f", {n} remaining" if n else ""
            lines.append(f"Found {_plural(n + fixed, 'error')} ({fixed} fixed{remaining}).")
    elif n:
        lines.append(f"Found {_count(diagnostics)}." + (" Info findings do not fail the run." if info_only else ""))
    else:
        lines.append("All checks passed!")
    if ctx.baselined:
        lines.append(f"{_plural(ctx.baselined, 'finding')} in the baseline not shown.")
    if n and ctx.show_fixes:
        safe = sum(1 for d in diagnostics if d.fix is not None and (d.fix.applicability == "safe" or ctx.unsafe_fixes))
        unsafe = sum(1 for d in diagnostics if d.fix is not None and d.fix.applicability == "unsafe" and not ctx.unsafe_fixes)
        if safe:
            lines.append(f"{style('[*]', ctx, fg='cyan')} {safe} fixable with the `--fix` option.")
        if unsafe:
            lines.append(
                f"{unsafe} hidden fix{'es' if unsafe != 1 else ''} can be enabled with the `--unsafe-fixes` option."
            )
    return "\n".join(lines)
