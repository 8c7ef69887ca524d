from __future__ import annotations

import json
import os

from ..printable import is_utf8, json_name, json_text


def to_records(diagnostics) -> list[dict]:
    """ruff's JSON records; valid for a strict parser whatever the file name (a name that is not
    UTF-8 in its lossless escaped form, :func:`amplint.printable.json_name`)."""
    out = []
    for d in diagnostics:
        rec = d.to_json()
        name = os.path.abspath(d.filename) if not d.filename.startswith("<") else d.filename
        rec["filename"] = json_name(name)
        if not is_utf8(rec["message"]):
            rec["message"] = json_text(rec["message"])
        out.append(rec)
    return out


def render(diagnostics, ctx) -> str:
    return json.dumps(to_records(diagnostics), indent=2, sort_keys=True) + "\n"
