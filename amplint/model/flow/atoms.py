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
    """The text without comments, the parentheses around the whole of it and whitespace but one
    space between words: ``(\n a\n and b  # c\n)`` and ``a and b`` are one condition."""
    if "#" in text:
        text = _without_comments(text)
    text = _SPACE.sub(lambda m: " " if _WORDS.match(m.string, m.start() - 1) and _WORDS.match(m.string, m.end())
                      and m.start() > 0 else "", text)
    while text.startswith("(") and text.endswith(")") and _outer_pair(text):
        text = text[1:-1]
    return text


#: whitespace between two word characters stays one space (``a and not b`` -> ``a and not b``,
#: so names stay words for :func:`mentions_any`); any other is dropped (``f( x )`` -> ``f(x)``)
_SPACE = re.compile(r"\s+")
_WORDS = re.compile(r"\w")


def _without_comments(text: str) -> str:
    out = []
    quote = None
    i = 0
    while i < len(text):
        ch = text[i]
        if quote is not None:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "#":
            end = text.find("\n", i)
            i = len(text) if end < 0 else end
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def _outer_pair(text: str) -> bool:
    """The first parenthesis closes at the last character (``(a)+(b)``: no)."""
    depth = 0
    quote = None
    for i, ch in enumerate(text):
        if quote is not None:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:
                return i == len(text) - 1
    return False


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
