"""Byte-level prefilter: skip files that cannot produce any finding, before importing LibCST.

Each rule names the triggers it depends on. A trigger is a list of alternatives; an alternative
matches when one of its literal *gate* tokens occurs in the file (a plain ``bytes in``, which
is fast) and every *confirm* pattern matches too (a regex, run only on the files that passed
the gate). The patterns mirror what the model accepts as evidence (see
:mod:`amplint.model.scalers`): a file with none of them has no GradScaler, no autocast and no
custom_fwd/bwd, so no rule can fire on it. A test checks, on the fixtures, the test cases and
the public corpus, that the prefilter never drops a file with a finding.
"""

from __future__ import annotations

import re
from typing import Iterable

from . import torch_api as T
from ._record import Record


class Alternative(Record):
    __slots__ = _fields = ("gate", "confirm")
    _defaults = {"confirm": ()}
    gate: tuple[bytes, ...]
    confirm: tuple[bytes, ...]


# Evidence of a GradScaler (:data:`amplint.torch_api.SCALER_EVIDENCE`): its name (constructor,
# annotation, import), ``unscale_``, or a scaler method called on a receiver whose name says
# scaler (``grad_scaler.step(``).
_SCALER_USE = T.SCALER_EVIDENCE

TRIGGERS: dict[str, tuple[Alternative, ...]] = {
    "scaler": (
        Alternative((b"caler", b"CALER", b"unscale_"), (_SCALER_USE,)),
        # ``x.scale(loss).backward()``: use proves the scaler whatever its name
        Alternative((b"scale",), (rb"\.\s*scale\(", rb"backward")),
    ),
    # autocast regions and decorators: the word itself (``torch.is_autocast_enabled()`` and
    # ``autocast_mode`` are no autocast)
    "autocast": (Alternative((b"autocast",), (rb"autocast\b",)),),
    "custom_fwd": (Alternative((b"custom_fwd", b"custom_bwd")),),
    "grad_scaler_name": (Alternative((b"GradScaler",)),),
    # an accelerator's clip (which unscales) beside ``accelerator.accumulate(...)``
    "accelerate_accumulate": (
        Alternative((b"accumulate(",), (rb"\.\s*(?:clip_grad_norm_|clip_grad_value_|unscale_gradients)\s*\(",)),
    ),
    # the deprecated namespaces: ``torch.cuda.amp``, ``from torch.cuda import amp``
    "deprecated_amp": (
        Alternative((b".amp", b" amp"), (T.DEPRECATED_EVIDENCE,)),
    ),
    # ``# noqa: AMP...`` comments (the unused-noqa check)
    "noqa": (Alternative((b"noqa", b"NOQA", b"Noqa"), (rb"AMP[0-9]",)),),
}


class Prefilter:
    def __init__(self, trigger_names: Iterable[str], extra_names: Iterable[str] = ()) -> None:
        alternatives: list[Alternative] = []
        for name in sorted(set(trigger_names)):
            alternatives.extend(TRIGGERS[name])
        alternatives.extend(_name_alternatives(extra_names))
        self._alts = _compile(alternatives)

    def __call__(self, data: bytes) -> bool:
        return _any_alternative(self._alts, data)


class FileTriggers:
    """Which rules' prefilters one file's bytes pass, each trigger decided once: the rules
    share a handful of triggers, and a confirming regex scans the whole file. The answer for a
    rule equals ``Prefilter(rule.triggers, extra_names)(data)``."""

    _compiled: dict[str, list] = {}

    def __init__(self, data: bytes, extra_names: Iterable[str] = ()) -> None:
        self.data = data
        self._hit: dict[str, bool] = {}
        self._extra_alts = _compile(_name_alternatives(extra_names))
        self._extra: bool | None = None

    def passes(self, triggers: Iterable[str]) -> bool:
        return any(self._trigger(t) for t in triggers) or self._extra_hit()

    def _trigger(self, name: str) -> bool:
        hit = self._hit.get(name)
        if hit is None:
            alts = self._compiled.get(name)
            if alts is None:
                alts = self._compiled[name] = _compile(TRIGGERS[name])
            hit = self._hit[name] = _any_alternative(alts, self.data)
        return hit

    def _extra_hit(self) -> bool:
        if self._extra is None:
            self._extra = _any_alternative(self._extra_alts, self.data)
        return self._extra


def _name_alternatives(names: Iterable[str]) -> list[Alternative]:
    """A configured scaler name (``trainer.loss_scaler``) passes when its last part occurs."""
    return [Alternative((n.rsplit(".", 1)[-1].encode(),)) for n in names]


def _compile(alternatives: Iterable[Alternative]) -> list:
    return [(a.gate, tuple(re.compile(p) for p in a.confirm)) for a in alternatives]


def _any_alternative(alts, data: bytes) -> bool:
    for gate, confirm in alts:
        for token in gate:
            if token in data:
                if all(p.search(data) for p in confirm):
                    return True
                break
    return False
