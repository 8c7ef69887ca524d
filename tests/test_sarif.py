"""SARIF 2.1.0 output: required structure, and read back by an independent consumer (sarif-tools)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from helpers import FIXTURES

from amplint.rules import all_rules


@pytest.fixture(scope="module")
def sarif_doc(tmp_path_factory):
    out = subprocess.run([sys.executable, "-m", "amplint", "--isolated", "--no-cache", "--select", "ALL",
                          "--output-format", "sarif", str(FIXTURES)], capture_output=True, text=True)
    assert out.returncode == 1
    path = tmp_path_factory.mktemp("sarif") / "amplint.sarif"
    path.write_text(out.stdout)
    json_out = subprocess.run([sys.executable, "-m", "amplint", "--isolated", "--no-cache", "--select", "ALL",
                               "--output-format", "json", str(FIXTURES)], capture_output=True, text=True)
    return path, json.loads(out.stdout), json.loads(json_out.stdout)


def test_structure(sarif_doc):
    _path, doc, findings = sarif_doc
    assert doc["version"] == "2.1.0"
    assert doc["$schema"].endswith("sarif-2.1.0.json")
    run = doc["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "amplint" and driver["version"]
    rules = {r["id"]: r for r in driver["rules"]}
    assert set(rules) >= {r.code for r in all_rules()}
    for r in all_rules():
        d = rules[r.code]
        assert d["name"] == r.name
        assert d["shortDescription"]["text"]
        assert "## What it does" in d["fullDescription"]["text"]
        assert d["helpUri"].endswith(f"{r.code}.md")
        assert d["defaultConfiguration"]["level"] in ("error", "warning", "note")
    assert len(run["results"]) == len(findings)
    for res, f in zip(run["results"], findings):
        assert res["ruleId"] == f["code"]
        assert driver["rules"][res["ruleIndex"]]["id"] == res["ruleId"]
        assert res["level"] in ("error", "note")
        assert res["message"]["text"] == f["message"]
        region = res["locations"][0]["physicalLocation"]["region"]
        assert region["startLine"] == f["location"]["row"] and region["startColumn"] == f["location"]["column"]
        artifact = res["locations"][0]["physicalLocation"]["artifactLocation"]
        assert artifact["uriBaseId"] == "%SRCROOT%" and not artifact["uri"].startswith(("/", "file:"))
        if f["fix"]:
            change = res["fixes"][0]["artifactChanges"][0]
            assert len(change["replacements"]) == len(f["fix"]["edits"])


def test_read_by_sarif_tools(sarif_doc):
    path, _doc, findings = sarif_doc
    from sarif import loader

    data = loader.load_sarif_file(str(path))
    assert data.get_result_count() == len(findings)
    assert sorted(r["ruleId"] for r in data.get_results()) == sorted(f["code"] for f in findings)
    assert data.get_distinct_tool_names() == ["amplint"]
    summary = subprocess.run([sys.executable, "-m", "sarif", "summary", str(path)], capture_output=True, text=True)
    assert summary.returncode == 0, summary.stderr
    notes = sum(1 for r in data.get_results() if r["level"] == "note")
    assert f"error: {len(findings) - notes}" in summary.stdout
    assert f"note: {notes}" in summary.stdout
