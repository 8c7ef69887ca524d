from __future__ import annotations

from . import headline


def render(diagnostics, ctx) -> str:
    return "".join(headline(d, ctx) + "\n" for d in diagnostics)
