"""SARIF 2.1.0, for GitHub code scanning and other SARIF consumers."""

from __future__ import annotations

import json
import os
from pathlib import Path

from .. import __version__
from ..diagnostics import DOCS_URL

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/amplint/amplint"
LEVELS = {"error": "error", "warning": "warning", "info": "note"}


def _rule_descriptor(rule) -> dict:
    doc = rule.doc()
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary()},
        "fullDescription": {"text": doc, "markdown": doc},
        "help": {"text": rule.summary(), "markdown": doc},
        "helpUri": DOCS_URL.format(code=rule.code),
        "defaultConfiguration": {"level": LEVELS.get(rule.severity, "error"), "enabled": rule.default_enabled},
        "properties": {"tags": [rule.code[:4], "amp"], "fixAvailability": rule.fix_availability},
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


def _uri(filename: str) -> str:
    if filename.startswith("<"):
        return filename
    return Path(os.path.abspath(filename)).as_uri()


def _region(start, end) -> dict:
    return {"startLine": start.row, "startColumn": start.column, "endLine": end.row, "endColumn": end.column}


def render(diagnostics, ctx) -> str:
    from ..rules import all_rules

    rules = list(all_rules())
    descriptors = [_syntax_descriptor()] + [_rule_descriptor(r) for r in rules]
    index = {d["id"]: i for i, d in enumerate(descriptors)}
    results = []
    for d in diagnostics:
        location = {"physicalLocation": {"artifactLocation": {"uri": _uri(d.filename)}, "region": _region(d.location, d.end_location)}}
        if d.cell is not None:
            location["logicalLocations"] = [{"name": f"cell {d.cell}", "kind": "notebookCell"}]
        res = {
            "ruleId": d.code,
            "ruleIndex": index.get(d.code, 0),
            "level": LEVELS.get(d.severity, "error"),
            "message": {"text": d.message},
            "locations": [location],
        }
        if d.fix is not None:
            res["fixes"] = [
                {
                    "description": {"text": d.fix.message},
                    "artifactChanges": [
                        {
                            "artifactLocation": {"uri": _uri(d.filename)},
                            "replacements": [
                                {"deletedRegion": _region(e.location, e.end_location), "insertedContent": {"text": e.content}}
                                for e in d.fix.edits
                            ],
                        }
                    ],
                }
            ]
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
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }
    return json.dumps(doc, indent=2) + "\n"
