"""Safe text for output: what amplint prints never carries the terminal control sequences,
line breaks or invalid code points that file names, messages and source lines can hold.

- :func:`printable` is the one function the terminal formats (concise, full, github, the
  warnings and errors on stderr, the summary) pass names, messages and snippets through: C0 and
  C1 control characters, DEL, line and paragraph separators, bidirectional overrides (Trojan
  Source) and lone surrogates become visible escapes (``\\x1b``, ``\\n``, ``\\u202e``); bytes of
  a file name that are not UTF-8 (Python holds them as surrogate escapes) become ``\\xNN``. A
  forged ``path:row:col: CODE`` line or an OSC 52 clipboard write cannot get through.
- :func:`json_name` is the lossless form of a file name for JSON and SARIF: the name itself when
  it is valid UTF-8, else the name with each backslash doubled and each byte that is not UTF-8
  written ``\\xNN`` (decode: ``\\\\`` is a backslash, ``\\xNN`` a byte). :func:`json_text` makes
  any other string valid for a strict JSON parser.
"""

from __future__ import annotations

import re

# C0 controls, DEL, C1 controls, ALM, LRM/RLM, line/paragraph separators, bidi embeddings and
# overrides, bidi isolates, and surrogates
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(m: re.Match) -> str:
    ch = m.group(0)
    named = _NAMED.get(ch)
    if named is not None:
        return named
    n = ord(ch)
    if 0xDC80 <= n <= 0xDCFF:  # a byte that was not UTF-8 (surrogateescape)
        return f"\\x{n - 0xDC00:02x}"
    if n < 0x100:
        return f"\\x{n:02x}"
    return f"\\u{n:04x}"


def printable(text: str) -> str:
    """``text`` with every character that could act on a terminal or a log parser escaped."""
    if text.isprintable():
        return text
    return _UNSAFE.sub(_escape, text)


def is_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def json_name(name: str) -> str:
    """A file name as a valid JSON string, losslessly (see the module docstring)."""
    if is_utf8(name):
        return name
    data = name.encode("utf-8", "surrogateescape") if _only_escapes(name) else name.encode("utf-8", "surrogatepass")
    return data.replace(b"\\", b"\\\\").decode("utf-8", "backslashreplace")


def _only_escapes(name: str) -> bool:
    return all(not (0xD800 <= ord(ch) <= 0xDFFF) or 0xDC80 <= ord(ch) <= 0xDCFF for ch in name)


def json_text(text: str) -> str:
    """Any string as one a strict JSON parser accepts (lone surrogates escaped visibly)."""
    if is_utf8(text):
        return text
    return re.sub("[\ud800-\udfff]", _escape, text)


def quote_name(name: str) -> str:
    """A name for a diff header: as is, or C-quoted like git when it holds unsafe characters."""
    if name.isprintable() and '"' not in name and "\\" not in name:
        return name
    return '"' + printable(name.replace("\\", "\\\\").replace('"', '\\"')) + '"'
