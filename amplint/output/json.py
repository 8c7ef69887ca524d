from __future__ import annotations

import json
import os

from ..printable import is_utf8, json_name, json_text


def _absolute(name: str) -> str:
    return os.path.abspath(name) if not name.startswith("<") and name != "-" else name


def to_records(diagnostics) -> list[dict]:
    """ruff's JSON records; valid for a strict parser whatever the file name (a name that is not
    UTF-8 in its lossless escaped form, :func:`amplint.printable.json_name`)."""
    out = []
    for d in diagnostics:
        rec = d.to_json()
        rec["filename"] = json_name(_absolute(d.filename))
        for r in rec.get("related", ()):
            r["filename"] = json_name(_absolute(r["filename"]))
            if not is_utf8(r.get("message", "")):
                r["message"] = json_text(r["message"])
        if not is_utf8(rec["message"]):
            rec["message"] = json_text(rec["message"])
        out.append(rec)
    return out


def render(diagnostics, ctx) -> str:
    return json.dumps(to_records(diagnostics), indent=2, sort_keys=True) + "\n"
