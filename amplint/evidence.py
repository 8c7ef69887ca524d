"""The measured evidence line per rule, written by `amplint verify --update-evidence`."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

EVIDENCE_FILE = Path(__file__).parent / "data" / "evidence.json"


@lru_cache(maxsize=1)
def _load() -> dict[str, str]:
    try:
        return json.loads(EVIDENCE_FILE.read_text(encoding="utf-8")).get("rules", {})
    except (OSError, ValueError):
        return {}


def evidence_line(code: str) -> str | None:
    return _load().get(code)
