"""SARIF 2.1.0, ready for GitHub code scanning (``github/codeql-action/upload-sarif``).

- Artifact URIs are relative to ``%SRCROOT%`` (``run.originalUriBaseIds``): the root of the git
  repository around the current folder, else the current folder; a file outside it keeps an
  absolute ``file://`` URI. Source from stdin is ``stdin`` (or its ``--stdin-filename``).
- Every result has ``partialFingerprints.amplintFingerprint/v1`` (code, file and the text of the
  flagged statement, not its line: an alert survives edits above it) and GitHub's
  ``primaryLocationLineHash`` is left for the upload action to compute.
- ``shortDescription`` is the rule's first sentence, at most 120 characters (GitHub's alert
  title); ``fullDescription`` and ``help`` carry the rule's documentation.
- Levels follow the one severity policy (:mod:`amplint.output`): error -> ``error``, info ->
  ``note``.
- A finding's related locations (``Diagnostic.related``) become ``relatedLocations``.
- Notebook regions point into the ``.ipynb`` file's JSON lines; the cell is named in a
  ``logicalLocation``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from urllib.parse import quote

from .. import __version__
from ..diagnostics import DOCS_URL
from ..printable import json_text
from . import SARIF_LEVEL

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/amplint/amplint"
SHORT_MAX = 120
FINGERPRINT_KEY = "amplintFingerprint/v1"


def short_description(text: str, limit: int = SHORT_MAX) -> str:
    """The first sentence of ``text``, cut at a word boundary to at most ``limit`` characters."""
    import re

    text = " ".join(text.split())
    text = re.sub(r"`([^`]*)`", r"\1", text)
    m = re.search(r"(?<=[.!?])\s+(?=[A-Z(`])", text)
    first = text[: m.start()] if m else text
    if len(first) <= limit:
        return first
    for sep in (": ", "; ", " (", ", "):
        k = first.rfind(sep, 0, limit)
        if k >= 40:
            return first[:k].rstrip(" ,;:(") + "."
    cut = first[: limit - 1].rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:(") + "…"


def _rule_descriptor(rule) -> dict:
    doc = rule.doc()
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": short_description(rule.summary())},
        "fullDescription": {"text": doc, "markdown": doc},
        "help": {"text": rule.summary(), "markdown": doc},
        "helpUri": DOCS_URL.format(code=rule.code),
        "defaultConfiguration": {"level": SARIF_LEVEL.get(rule.severity, "error"), "enabled": rule.default_enabled},
        "properties": {"tags": [rule.code[:4], "amp"], "fixAvailability": rule.fix_availability,
                       "severity": rule.severity},
    }


def _syntax_descriptor() -> dict:
    text = "The file cannot be decoded or parsed as Python, so it was not analysed."
    return {
        "id": "AMP000",
        "name": "syntax-error",
        "shortDescription": {"text": text},
        "fullDescription": {"text": text},
        "defaultConfiguration": {"level": "error"},
    }


def srcroot(start: str | None = None) -> str:
    """The git repository root around ``start`` (default: the current folder), else ``start``."""
    d = os.path.abspath(start or os.getcwd())
    p = d
    while True:
        if os.path.exists(os.path.join(p, ".git")):
            return p
        parent = os.path.dirname(p)
        if parent == p:
            return d
        p = parent


def artifact(filename: str, root: str) -> dict:
    """An artifactLocation: relative to %SRCROOT% when the file is below it."""
    if filename in ("-", "<stdin>", ""):
        return {"uri": "stdin"}
    if filename.startswith("<"):
        return {"uri": quote(os.fsencode(filename.strip("<>")))}
    absolute = os.path.abspath(filename)
    try:
        rel = os.path.relpath(absolute, root)
    except ValueError:  # another drive
        rel = None
    if rel is not None and not rel.startswith(os.pardir + os.sep) and rel != os.pardir:
        # bytes, not text: a name that is not UTF-8 is percent-encoded byte for byte (a valid URI)
        return {"uri": quote(os.fsencode(Path(rel).as_posix())), "uriBaseId": "%SRCROOT%"}
    return {"uri": Path(absolute).as_uri()}


def _dir_uri(root: str) -> str:
    uri = Path(root).as_uri()
    return uri if uri.endswith("/") else uri + "/"


def _region(start, end) -> dict:
    return {"startLine": start[0], "startColumn": start[1], "endLine": end[0], "endColumn": end[1]}


def _physical(d, root: str) -> dict:
    from .positions import file_region

    start, end = file_region(d)
    return {"artifactLocation": artifact(d.filename, root), "region": _region(start, end)}


def render(diagnostics, ctx) -> str:
    from ..baseline import fingerprints
    from ..rules import all_rules

    root = (ctx.srcroot if ctx is not None and ctx.srcroot else None) or srcroot()
    rules = list(all_rules())
    descriptors = [_syntax_descriptor()] + [_rule_descriptor(r) for r in rules]
    index = {d["id"]: i for i, d in enumerate(descriptors)}
    read = ctx.read_source if ctx is not None else None
    prints = fingerprints(diagnostics, read, root)
    results = []
    for d, fp in zip(diagnostics, prints):
        location = {"physicalLocation": _physical(d, root)}
        if d.cell is not None:
            location["logicalLocations"] = [{"name": f"cell {d.cell}", "kind": "notebookCell"}]
        res = {
            "ruleId": d.code,
            "ruleIndex": index.get(d.code, 0),
            "level": SARIF_LEVEL.get(d.severity, "error"),
            "message": {"text": json_text(d.message)},
            "locations": [location],
            "partialFingerprints": {FINGERPRINT_KEY: fp},
        }
        if d.related:
            related = []
            for k, r in enumerate(d.related, 1):
                loc = {"id": k, "physicalLocation": _physical(r, root), "message": {"text": json_text(r.message)}}
                if r.cell is not None:
                    loc["logicalLocations"] = [{"name": f"cell {r.cell}", "kind": "notebookCell"}]
                related.append(loc)
            res["relatedLocations"] = related
        if d.fix is not None and d.cell is None:
            res["fixes"] = [
                {
                    "description": {"text": d.fix.message},
                    "artifactChanges": [
                        {
                            "artifactLocation": artifact(d.filename, root),
                            "replacements": [
                                {"deletedRegion": _region((e.location.row, e.location.column),
                                                          (e.end_location.row, e.end_location.column)),
                                 "insertedContent": {"text": e.content}}
                                for e in d.fix.edits
                            ],
                        }
                    ],
                }
            ]
        if d.fix is not None:
            res["properties"] = {"fixApplicability": d.fix.applicability}
        results.append(res)
    doc = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "amplint",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "informationUri": INFORMATION_URI,
                        "rules": descriptors,
                    }
                },
                "originalUriBaseIds": {"%SRCROOT%": {"uri": _dir_uri(root)}},
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }
    return json.dumps(doc, indent=2) + "\n"
