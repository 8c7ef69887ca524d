"""Glob patterns for ``exclude``, ``extend-exclude`` and ``per-file-ignores``, as ruff reads them.

ruff matches these with the ``globset`` crate's defaults, and so does this module:

- a pattern without a ``/`` (``build``, ``test_*.py``) matches the name of the file or of any
  of its folders below the pattern's anchor (``build`` excludes every folder named ``build``);
- a pattern with a ``/`` (``tests/*``, ``src/**/gen_*.py``) is anchored at the folder of the
  configuration file that defines it (the current folder for command-line patterns) and
  matches the path of the file or of any of its folders, relative to that anchor;
- ``*`` and ``?`` also match ``/`` (``tests/*`` covers ``tests/a/b.py``), ``**/`` matches zero
  or more folders (``**/train.py`` matches ``train.py`` at the anchor too), a trailing ``/**``
  everything below a folder, ``[abc]`` / ``[!abc]`` a character class, ``{a,b}`` either
  alternative, and ``\\`` escapes the next character.
"""

from __future__ import annotations

import os
import re


class GlobError(ValueError):
    pass


def translate(pattern: str) -> str:
    """The regular expression (without anchors) for one glob pattern."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            if pattern.startswith("**", i):
                j = i + 2
                while j < n and pattern[j] == "*":
                    j += 1
                at_start = i == 0 or pattern[i - 1] == "/"
                if at_start and j < n and pattern[j] == "/":
                    out.append("(?:.*/)?")
                    i = j + 1
                    continue
                out.append(".*")
                i = j
                continue
            out.append(".*")
            i += 1
        elif c == "?":
            out.append(".")
            i += 1
        elif c == "[":
            j = i + 1
            if j < n and pattern[j] in "!^":
                j += 1
            if j < n and pattern[j] == "]":
                j += 1
            while j < n and pattern[j] != "]":
                j += 1
            if j >= n:
                raise GlobError(f"unclosed character class in `{pattern}`")
            body = pattern[i + 1:j]
            neg = body[:1] in ("!", "^")
            if neg:
                body = body[1:]
            body = body.replace("\\", "\\\\")
            out.append(f"[{'^' if neg else ''}{body}]")
            i = j + 1
        elif c == "{":
            depth, j = 1, i + 1
            while j < n and depth:
                if pattern[j] == "{":
                    depth += 1
                elif pattern[j] == "}":
                    depth -= 1
                j += 1
            if depth:
                raise GlobError(f"unclosed `{{` in `{pattern}`")
            alternatives = _split_top(pattern[i + 1:j - 1])
            out.append("(?:" + "|".join(translate(a) for a in alternatives) + ")")
            i = j
        elif c == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def _split_top(body: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for k, ch in enumerate(body):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(body[start:k])
            start = k + 1
    parts.append(body[start:])
    return parts


def _posix(path: str) -> str:
    return path.replace(os.sep, "/") if os.sep != "/" else path


class PatternSet:
    """Patterns, each with its anchor (an absolute folder), compiled once.

    ``entry(abs_path, name)`` tests one path by itself (the directory walk, which tested the
    folders above it on the way down); ``path(abs_path)`` tests a path and every folder above
    it, up to each pattern's anchor (a path named on the command line)."""

    def __init__(self, patterns: list[tuple[str, str]] | tuple[tuple[str, str], ...]) -> None:
        names: list[str] = []
        by_anchor: dict[str, list[str]] = {}
        self.patterns = tuple(patterns)
        for anchor, raw in patterns:
            pat = raw.strip()
            if pat.startswith("./"):
                pat = pat[2:]
            pat = pat.rstrip("/") or pat
            if not pat:
                continue
            if "/" not in pat:
                names.append(translate(pat))
            else:
                by_anchor.setdefault(_posix(os.path.abspath(anchor)).rstrip("/"), []).append(translate(pat.lstrip("/")))
        self._names = re.compile("(?:" + "|".join(names) + r")\Z", re.S) if names else None
        self._paths = None
        if by_anchor:
            alts = [re.escape(a) + "/(?:" + "|".join(pats) + ")" for a, pats in by_anchor.items()]
            self._paths = re.compile("(?:" + "|".join(alts) + r")\Z", re.S)
        self._anchors = tuple(by_anchor)

    def __bool__(self) -> bool:
        return self._names is not None or self._paths is not None

    def entry(self, abs_path: str, name: str) -> bool:
        if self._names is not None and self._names.match(name):
            return True
        return self._paths is not None and self._paths.match(_posix(abs_path)) is not None

    def path(self, abs_path: str, floor: str | None = None) -> bool:
        """``abs_path`` or a folder above it matches; name patterns look at the components
        below ``floor`` (the settings root) only, so a project kept under a folder called
        ``build`` is not excluded as a whole."""
        p = _posix(os.path.abspath(abs_path))
        if self._paths is not None:
            q = p
            while True:
                if self._paths.match(q):
                    return True
                parent = q.rsplit("/", 1)[0]
                if not parent or parent == q:
                    break
                q = parent
        if self._names is not None:
            base = _posix(os.path.abspath(floor)).rstrip("/") if floor else ""
            rel = p[len(base) + 1:] if base and p.startswith(base + "/") else p.lstrip("/")
            for part in rel.split("/"):
                if part and self._names.match(part):
                    return True
        return False
