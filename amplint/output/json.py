from __future__ import annotations

import json
import os


def to_records(diagnostics) -> list[dict]:
    out = []
    for d in diagnostics:
        rec = d.to_json()
        rec["filename"] = os.path.abspath(d.filename) if not d.filename.startswith("<") else d.filename
        out.append(rec)
    return out


def render(diagnostics, ctx) -> str:
    return json.dumps(to_records(diagnostics), indent=2, sort_keys=True) + "\n"
