"""Lines as Python counts them: only ``\\r\\n``, ``\\r`` and ``\\n`` end a line.

``str.splitlines`` also breaks at form feeds, vertical tabs, ``\\x1c``-``\\x1e``, ``\\x85``,
U+2028 and U+2029, which CPython and LibCST keep inside a line: row numbers computed with it
drift, and a fix would land on the wrong line.
"""

from __future__ import annotations

import re

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def split_lines(text: str, keepends: bool = False) -> list[str]:
    lines = _LINE.findall(text)
    if keepends:
        return lines
    return [line.rstrip("\r\n") for line in lines]
