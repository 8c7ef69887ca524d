"""SARIF for GitHub code scanning (schema-valid, relative URIs under %SRCROOT%, fingerprints,
short descriptions, related locations, stdin) and the one severity policy across formats."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from helpers import FIXTURES
from test_config_hierarchy import BAD

from amplint.diagnostics import Diagnostic, Location, Related
from amplint.output import RenderContext, render

SCHEMA = Path(__file__).parent / "data" / "sarif-schema-2.1.0.json"  # OASIS SARIF 2.1.0 (errata 01), vendored

INFO = textwrap.dedent(
    """\
    import torch


    def train(model, optimizer, loader):
        scaler = torch.amp.GradScaler("cuda")
        for x, y in loader:
            with torch.autocast("cuda", dtype=torch.float16):
                loss = model(x, y)
                scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
    """
)


def run(*args, cwd, input=None):
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([sys.executable, "-m", "amplint", "--isolated", "--no-cache", *args], capture_output=True,
                          text=True, cwd=cwd, input=input, env=env)


def validate(doc: dict) -> None:
    import jsonschema

    schema = json.loads(SCHEMA.read_text())
    jsonschema.validators.validator_for(schema)(schema).validate(doc)


@pytest.fixture
def repo(tmp_path):
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "src" / "sub dir").mkdir(parents=True)
    (tmp_path / "src" / "train.py").write_text(BAD)
    (tmp_path / "src" / "sub dir" / "info.py").write_text(INFO)
    return tmp_path


def test_github_ready(repo):
    p = run("--output-format", "sarif", ".", cwd=repo / "src")  # from a subfolder: still the repository root
    doc = json.loads(p.stdout)
    validate(doc)
    assert doc["runs"][0]["originalUriBaseIds"] == {"%SRCROOT%": {"uri": repo.as_uri() + "/"}}
    assert doc["runs"][0]["results"][1]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "src/train.py"
    p = run("--output-format", "sarif", "src", cwd=repo)
    doc = json.loads(p.stdout)
    validate(doc)
    run_ = doc["runs"][0]
    assert run_["originalUriBaseIds"] == {"%SRCROOT%": {"uri": repo.as_uri() + "/"}}
    locs = [r["locations"][0]["physicalLocation"]["artifactLocation"] for r in run_["results"]]
    assert locs == [{"uri": "src/sub%20dir/info.py", "uriBaseId": "%SRCROOT%"},
                    {"uri": "src/train.py", "uriBaseId": "%SRCROOT%"}, {"uri": "src/train.py", "uriBaseId": "%SRCROOT%"}]
    prints = [r["partialFingerprints"]["amplintFingerprint/v1"] for r in run_["results"]]
    assert len(set(prints)) == 3
    for rule in run_["tool"]["driver"]["rules"]:
        assert 0 < len(rule["shortDescription"]["text"]) <= 120, rule["id"]
        assert "`" not in rule["shortDescription"]["text"]
    assert [r["level"] for r in run_["results"]] == ["note", "error", "error"]
    # fingerprints survive a line move
    (repo / "src" / "train.py").write_text("# a comment\n\n" + BAD)
    moved = json.loads(run("--output-format", "sarif", "src", cwd=repo).stdout)["runs"][0]["results"]
    assert [r["partialFingerprints"]["amplintFingerprint/v1"] for r in moved] == prints
    assert moved[1]["locations"][0]["physicalLocation"]["region"]["startLine"] == 12


def test_stdin_uri_is_valid(repo):
    doc = json.loads(run("--output-format", "sarif", "-", cwd=repo, input=BAD).stdout)
    validate(doc)
    assert {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in doc["runs"][0]["results"]} == {"stdin"}
    doc = json.loads(run("--output-format", "sarif", "--stdin-filename", "src/new.py", cwd=repo, input=BAD).stdout)
    assert doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"] == {
        "uri": "src/new.py", "uriBaseId": "%SRCROOT%"}


def test_whole_fixture_run_is_schema_valid():
    p = run("--select", "ALL", "--output-format", "sarif", str(FIXTURES), cwd=FIXTURES.parent)
    validate(json.loads(p.stdout))


def test_related_locations_plumbing(tmp_path):
    """A rule (the lead's project-wide analysis) attaches related locations: JSON `related`,
    SARIF `relatedLocations` and the LSP's relatedInformation carry them."""
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "b.py").write_text("y = 2\nz = 3\n")
    d = Diagnostic("AMP001", "step-without-update", "no update", str(tmp_path / "a.py"), Location(1, 1), Location(1, 6),
                   related=(Related(str(tmp_path / "b.py"), Location(2, 1), Location(2, 6), "the scaler is stepped here"),))
    ctx = RenderContext(srcroot=str(tmp_path))
    doc = json.loads(render("sarif", [d], ctx))
    validate(doc)
    rel = doc["runs"][0]["results"][0]["relatedLocations"]
    assert rel == [{"id": 1, "message": {"text": "the scaler is stepped here"},
                    "physicalLocation": {"artifactLocation": {"uri": "b.py", "uriBaseId": "%SRCROOT%"},
                                         "region": {"startLine": 2, "startColumn": 1, "endLine": 2, "endColumn": 6}}}]
    rec = json.loads(render("json", [d], ctx))[0]
    assert rec["related"] == [{"cell": None, "end_location": {"column": 6, "row": 2}, "filename": str(tmp_path / "b.py"),
                               "location": {"column": 1, "row": 2}, "message": "the scaler is stepped here"}]
    assert Diagnostic.from_json(d.to_json()) == d  # the cache keeps them


def test_one_severity_policy_everywhere(tmp_path):
    (tmp_path / "info.py").write_text(INFO)
    concise = run("info.py", cwd=tmp_path)
    assert concise.returncode == 0, concise.stdout  # info findings do not fail the run
    assert "info.py:9:13: AMP105 [info] " in concise.stdout
    assert "Found 1 info finding. Info findings do not fail the run." in concise.stdout
    data = json.loads(run("--output-format", "json", "info.py", cwd=tmp_path).stdout)
    assert [(d["code"], d["severity"]) for d in data] == [("AMP105", "info")]
    lines = json.loads(run("--output-format", "json-lines", "info.py", cwd=tmp_path).stdout.splitlines()[0])
    assert lines["severity"] == "info"
    gh = run("--output-format", "github", "info.py", cwd=tmp_path)
    assert gh.stdout.startswith("::notice ") and gh.returncode == 0
    sarif = json.loads(run("--output-format", "sarif", "info.py", cwd=tmp_path).stdout)
    assert [r["level"] for r in sarif["runs"][0]["results"]] == ["note"]
    (tmp_path / "bad.py").write_text(BAD)
    both = run(".", cwd=tmp_path)
    assert both.returncode == 1 and "Found 2 errors and 1 info finding." in both.stdout
    data = json.loads(run("--output-format", "json", ".", cwd=tmp_path).stdout)
    assert sorted(d["severity"] for d in data) == ["error", "error", "info"]
