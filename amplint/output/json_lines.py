from __future__ import annotations

import json

from .json import to_records


def render(diagnostics, ctx) -> str:
    return "".join(json.dumps(r, sort_keys=True) + "\n" for r in to_records(diagnostics))
