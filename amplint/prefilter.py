"""Byte-level prefilter: skip files that cannot produce any finding, before importing LibCST.

Each rule names the triggers it depends on.  A trigger is a list of alternatives; an
alternative is a tuple of byte patterns that must all occur.  The patterns mirror what the
model accepts as evidence (see :mod:`amplint.model.scalers`): a file with none of them has no
scaler, no autocast and no custom_fwd/bwd, so no rule can fire on it.  A test checks, on the
fixtures, the test cases and the public corpus, that the prefilter never drops a file with a
finding.
"""

from __future__ import annotations

import re
from typing import Iterable

TRIGGERS: dict[str, tuple[tuple[bytes, ...], ...]] = {
    # a GradScaler by constructor/annotation (``GradScaler``), by a scaler-ish name
    # (``scaler``, ``grad_scaler``, ``Scaler``), by ``unscale_``, or by ``x.scale(l).backward()``
    "scaler": ((rb"[Ss][Cc][Aa][Ll][Ee][Rr]",), (rb"unscale_",), (rb"\.\s*scale\s*\(", rb"backward")),
    # autocast regions, decorators and the deprecated namespaces' names
    "autocast": ((rb"autocast",),),
    "custom_fwd": ((rb"custom_[fb]wd",),),
    "grad_scaler_name": ((rb"GradScaler",),),
    # ``# noqa: AMP...`` comments (the unused-noqa check)
    "noqa": ((rb"[Nn][Oo][Qq][Aa]", rb"AMP[0-9]"),),
}


class Prefilter:
    def __init__(self, trigger_names: Iterable[str], extra_names: Iterable[str] = ()) -> None:
        alternatives: list[tuple[bytes, ...]] = []
        for name in sorted(set(trigger_names)):
            alternatives.extend(TRIGGERS[name])
        for extra in extra_names:
            last = extra.rsplit(".", 1)[-1]
            alternatives.append((re.escape(last.encode()),))
        singles = [alt[0] for alt in alternatives if len(alt) == 1]
        self._any = re.compile(b"|".join(singles)) if singles else None
        self._all = [tuple(re.compile(p) for p in alt) for alt in alternatives if len(alt) > 1]

    def __call__(self, data: bytes) -> bool:
        if self._any is not None and self._any.search(data):
            return True
        return any(all(p.search(data) for p in alt) for alt in self._all)
