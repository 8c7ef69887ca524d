from __future__ import annotations

import json
import os


def to_records(diagnostics) -> list[dict]:
    out = []
    for d in diagnostics:
        rec = d.to_json()
        rec["filename"] = os.path.abspath(d.filename) if not d.filename.startswith("<") and d.filename != "-" else d.filename
        for r in rec.get("related", ()):
            if not r["filename"].startswith("<") and r["filename"] != "-":
                r["filename"] = os.path.abspath(r["filename"])
        out.append(rec)
    return out


def render(diagnostics, ctx) -> str:
    return json.dumps(to_records(diagnostics), indent=2, sort_keys=True) + "\n"
