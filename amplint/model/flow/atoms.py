"""The text of condition atoms: its compact form, whether it reads like an AMP switch, whether
it mentions a name (read by :mod:`.conditions`, the loops and widening)."""

from __future__ import annotations

import functools
import re

#: a condition that reads like an AMP switch; ``amp`` and ``half`` only as words of an identifier
#: (``use_amp``, ``useAmp``, ``AMP``, ``half_precision``), not inside ``examples``, ``clamp``,
#: ``SAMPLE_RATE`` or ``behalf``
_AMP_SWITCH = re.compile(r"(?i:scal|fp16|float16|precision|mixed|autocast|cuda|enabled)"
                         r"|(?<![A-Za-z])(?:amp|half)(?![a-z])|(?:Amp|Half)(?![a-z])|(?<![A-Z])(?:AMP|HALF)(?![A-Z])")


def compact(text: str) -> str:
    return re.sub(r"\s+", "", text)


@functools.lru_cache(maxsize=4096)
def amp_switch(text: str) -> bool:
    return bool(_AMP_SWITCH.search(text))


def mentions_any(key: str, names) -> bool:
    for n in names:
        if key == n or key.startswith(n + ".") or key.startswith(n + "["):
            return True
        if n in key and re.search(r"(?<![\w.])" + re.escape(n) + r"(?![\w])", key):
            return True
    return False
