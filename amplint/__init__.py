"""amplint: a linter for PyTorch automatic mixed precision (AMP) misuse."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["__version__", "lint_source", "lint_paths", "Diagnostic"]

if TYPE_CHECKING:  # pragma: no cover
    from .diagnostics import Diagnostic
    from .engine import lint_paths, lint_source


def __getattr__(name: str) -> Any:  # lazy: ``import amplint`` stays cheap
    if name in ("lint_source", "lint_paths"):
        from . import engine

        return getattr(engine, name)
    if name == "Diagnostic":
        from .diagnostics import Diagnostic

        return Diagnostic
    raise AttributeError(name)
