"""Shared test helpers: ``# error: CODE`` markers and linting with every rule selected."""

from __future__ import annotations

import re
from pathlib import Path

from amplint.engine import lint_source

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
CASES = Path(__file__).resolve().parent / "cases"
MARKER = re.compile(r"#\s*error:\s*([A-Z0-9, ]+)")
#: a training loop that clips still-scaled gradients (AMP002 on line 10), for end-to-end tests
CLIP_BEFORE_UNSCALE = """\
import torch


def train(model, optimizer, loader):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y)
        scaler.scale(loss).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
"""


def expected(path: Path) -> set[tuple[str, int]]:
    out = set()
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        m = MARKER.search(line)
        if m:
            for code in re.split(r"[ ,]+", m.group(1).strip()):
                if code:
                    out.add((code, i))
    return out


def found(path: Path, select=("ALL",)) -> set[tuple[str, int]]:
    diags = lint_source(path.read_bytes(), str(path), select=list(select))
    return {(d.code, d.location.row) for d in diags}


def lint(source: str, filename: str = "case.py", select=("ALL",)):
    return lint_source(source, filename, select=list(select))


def codes_and_rows(source: str, select=("ALL",)) -> list[tuple[str, int]]:
    return sorted((d.code, d.location.row) for d in lint(source, select=select))


def apply_edits(source: str, edits) -> str:
    """Apply text edits (1-based rows/columns, as in diagnostics) to ``source``."""
    lines = source.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(loc) -> int:
        if loc.row - 1 >= len(lines):
            return len(source)
        return starts[loc.row - 1] + loc.column - 1

    out = source
    for e in sorted(edits, key=lambda e: (e.location, e.end_location), reverse=True):
        out = out[: offset(e.location)] + e.content + out[offset(e.end_location):]
    return out
