"""GitHub Actions workflow commands: one ``::error`` annotation per finding."""

from __future__ import annotations

from ..printable import printable


def _escape_data(s: str) -> str:
    return printable(s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def _escape_property(s: str) -> str:
    return _escape_data(s).replace(":", "%3A").replace(",", "%2C")


def render(diagnostics, ctx) -> str:
    lines = []
    for d in diagnostics:
        loc = f"{d.location.row}:{d.location.column}" if d.cell is None else f"cell {d.cell}:{d.location.row}:{d.location.column}"
        props = (
            f"title={_escape_property('amplint (' + d.code + ')')},"
            f"file={_escape_property(d.filename)},"
            f"line={d.location.row},col={d.location.column},"
            f"endLine={d.end_location.row},endColumn={d.end_location.column}"
        )
        kind = {"info": "notice", "warning": "warning"}.get(d.severity, "error")
        lines.append(f"::{kind} {props}::{_escape_data(f'{d.filename}:{loc}: {d.code} {d.message}')}\n")
    return "".join(lines)
