"""Baselines: adopt amplint on a big code base by recording today's findings and reporting only
new ones (``--baseline FILE``; ``--write-baseline`` records it).

A finding is identified by its code, its file (relative to the baseline file's folder) and a
fingerprint of the flagged code: the text of the lines the finding spans, with whitespace
collapsed, not its line number, so a finding survives code added or removed above it. Equal
keys are counted: a baseline with one `AMP001` at a given statement text hides one such
finding, and a second copy of the same statement is reported. The same fingerprint is SARIF's
``partialFingerprints`` value.
"""

from __future__ import annotations

import json
import os
import zlib
from collections import Counter
from pathlib import Path

VERSION = 1
_MAX_TEXT = 4000


class BaselineError(Exception):
    pass


def _statement_text(d, read_source, cache: dict) -> str:
    key = (d.filename, d.cell)
    if key not in cache:
        text = read_source(d.filename, d.cell) if read_source is not None else None
        from .lines import split_lines

        cache[key] = split_lines(text) if text is not None else None
    lines = cache[key]
    if not lines or d.location.row > len(lines):
        return d.message
    last = min(d.end_location.row, len(lines), d.location.row + 40)
    chunk = " ".join(lines[r - 1].strip() for r in range(d.location.row, last + 1))
    return " ".join(chunk.split())[:_MAX_TEXT]


def _relpath(filename: str, root: str) -> str:
    if filename in ("-", "") or filename.startswith("<"):
        return filename or "-"
    absolute = os.path.abspath(filename)
    try:
        rel = os.path.relpath(absolute, root)
    except ValueError:
        return Path(absolute).as_posix()
    return Path(rel).as_posix()


def _digest(text: str) -> str:
    data = text.encode("utf-8", "surrogatepass")
    return f"{zlib.crc32(data):08x}{zlib.adler32(data):08x}"


def keys(diagnostics, read_source, root: str) -> list[tuple[str, str, str]]:
    """(code, file relative to ``root``, statement fingerprint) of each diagnostic."""
    cache: dict = {}
    out = []
    for d in diagnostics:
        out.append((d.code, _relpath(d.filename, root), _digest(_statement_text(d, read_source, cache))))
    return out


def fingerprints(diagnostics, read_source, root: str) -> list[str]:
    """One stable fingerprint per diagnostic: code, file, statement text and, among findings
    with those three equal, its rank (SARIF's ``partialFingerprints``)."""
    seen: Counter = Counter()
    out = []
    for k in keys(diagnostics, read_source, root):
        seen[k] += 1
        out.append(_digest("\0".join(k) + f"\0{seen[k]}") + f":{seen[k]}")
    return out


def write(path: str, diagnostics, read_source) -> int:
    root = os.path.dirname(os.path.abspath(path))
    entries = []
    for d, (code, rel, fp) in zip(diagnostics, keys(diagnostics, read_source, root)):
        entries.append({"code": code, "filename": rel, "fingerprint": fp, "message": d.message,
                        "row": d.location.row, **({"cell": d.cell} if d.cell is not None else {})})
    entries.sort(key=lambda e: (e["filename"], e.get("cell") or 0, e["row"], e["code"], e["fingerprint"]))
    doc = {"version": VERSION, "tool": "amplint", "findings": entries}
    tmp = f"{path}.amplint-tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=2, sort_keys=True)
        f.write("\n")
    os.replace(tmp, path)
    return len(entries)


def load(path: str) -> Counter:
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except FileNotFoundError:
        raise BaselineError(f"{path}: no such baseline file (record one with --write-baseline)") from None
    except (OSError, ValueError, RecursionError) as e:
        raise BaselineError(f"{path}: cannot read the baseline: {e}") from None
    if not isinstance(doc, dict) or doc.get("version") != VERSION or not isinstance(doc.get("findings"), list):
        raise BaselineError(f"{path}: not an amplint baseline (version {VERSION})")
    out: Counter = Counter()
    for e in doc["findings"]:
        if not isinstance(e, dict) or not all(isinstance(e.get(k), str) for k in ("code", "filename", "fingerprint")):
            raise BaselineError(f"{path}: damaged entry {e!r}")
        out[(e["code"], e["filename"], e["fingerprint"])] += 1
    return out


def filter_new(path: str, diagnostics, read_source) -> tuple[list, int, int]:
    """The diagnostics not in the baseline; (new, hidden, stale entries)."""
    recorded = load(path)
    root = os.path.dirname(os.path.abspath(path))
    left = Counter(recorded)
    new = []
    hidden = 0
    for d, k in zip(diagnostics, keys(diagnostics, read_source, root)):
        if left[k] > 0:
            left[k] -= 1
            hidden += 1
        else:
            new.append(d)
    return new, hidden, sum(left.values())
