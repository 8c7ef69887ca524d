from __future__ import annotations

from . import display_location, fix_marker
from ..printable import printable


def render(diagnostics, ctx) -> str:
    return "".join(f"{display_location(d)}: {d.code} {fix_marker(d, ctx)}{printable(d.message)}\n" for d in diagnostics)
