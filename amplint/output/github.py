"""GitHub Actions workflow commands: one annotation per finding (``::error``, or ``::notice``
for info findings; see the severity policy in :mod:`amplint.output`).

A notebook's finding is annotated on the line of the ``.ipynb`` file that holds the cell's
line (GitHub shows annotations on the file's raw lines); the message still names the cell.
"""

from __future__ import annotations

from . import GITHUB_KIND
from ..printable import printable


def _escape_data(s: str) -> str:
    return printable(s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def _escape_property(s: str) -> str:
    return _escape_data(s).replace(":", "%3A").replace(",", "%2C")


def render(diagnostics, ctx) -> str:
    from .positions import file_region

    lines = []
    for d in diagnostics:
        loc = f"{d.location.row}:{d.location.column}" if d.cell is None else f"cell {d.cell}:{d.location.row}:{d.location.column}"
        (row, col), (end_row, end_col) = file_region(d)
        props = (
            f"title={_escape_property('amplint (' + d.code + ')')},"
            f"file={_escape_property(d.filename)},"
            f"line={row},col={col},"
            f"endLine={end_row},endColumn={end_col}"
        )
        kind = GITHUB_KIND.get(d.severity, "error")
        lines.append(f"::{kind} {props}::{_escape_data(f'{d.filename}:{loc}: {d.code} {d.message}')}\n")
    return "".join(lines)
