"""`amplint server`: the language server, end to end over stdio (a subprocess; no editor)."""

from __future__ import annotations

import os
import textwrap

import pytest

pytest.importorskip("pygls", reason="the lsp extra (pygls) is part of the test extra")
from helpers import CLIP_BEFORE_UNSCALE  # noqa: E402
from lspclient import LspClient, apply_text_edits  # noqa: E402

BUGGY = CLIP_BEFORE_UNSCALE


@pytest.fixture
def server(tmp_path):
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    client = LspClient(cwd=str(tmp_path), env=env)
    client.initialize(tmp_path)
    yield client
    assert client.close() == 0


def _open(client, path, text, version=1):
    uri = path.as_uri()
    client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": version,
                                                            "text": text}})
    return uri


def test_diagnostics_code_action_and_edit(server, tmp_path):
    path = tmp_path / "train.py"
    path.write_text(BUGGY)
    uri = _open(server, path, BUGGY)
    diags = server.diagnostics(uri, version=1)["diagnostics"]
    assert [(d["code"], d["range"], d["severity"], d["source"]) for d in diags] == [
        ("AMP002", {"start": {"line": 9, "character": 8}, "end": {"line": 9, "character": 63}}, 1, "amplint"),
    ]
    assert diags[0]["codeDescription"]["href"].endswith("AMP002.md")

    actions = server.request("textDocument/codeAction", {
        "textDocument": {"uri": uri}, "range": diags[0]["range"], "context": {"diagnostics": diags}})
    titles = [a["title"] for a in actions]
    quick = [a for a in actions if a["kind"] == "quickfix" and a["title"].startswith("AMP002")]
    assert len(quick) == 1 and quick[0]["isPreferred"] is True, titles
    assert "Disable AMP002 for this line" in titles
    fixed = apply_text_edits(BUGGY, quick[0]["edit"]["changes"][uri])
    assert "        scaler.unscale_(optimizer)\n        torch.nn.utils.clip_grad_norm_" in fixed

    # the editor applies the edit: an incremental change, then new diagnostics (none left)
    edits = quick[0]["edit"]["changes"][uri]
    server.notify("textDocument/didChange", {
        "textDocument": {"uri": uri, "version": 2},
        "contentChanges": [{"range": e["range"], "text": e["newText"]} for e in edits]})
    assert server.diagnostics(uri, version=2)["diagnostics"] == []

    # an edit that brings a bug back (remove `scaler.update()`): AMP001 on the step line
    lines = fixed.splitlines(keepends=True)
    row = next(i for i, line in enumerate(lines) if "scaler.update()" in line)
    server.notify("textDocument/didChange", {
        "textDocument": {"uri": uri, "version": 3},
        "contentChanges": [{"range": {"start": {"line": row, "character": 0}, "end": {"line": row + 1, "character": 0}},
                            "text": ""}]})
    diags = server.diagnostics(uri, version=3)["diagnostics"]
    assert [(d["code"], d["range"]["start"]) for d in diags] == [("AMP001", {"line": row - 1, "character": 8})]

    # the noqa action, applied, silences it
    actions = server.request("textDocument/codeAction", {
        "textDocument": {"uri": uri}, "range": diags[0]["range"], "context": {"diagnostics": diags}})
    noqa = next(a for a in actions if a["title"] == "Disable AMP001 for this line")
    text = apply_text_edits("".join(lines[:row] + lines[row + 1:]), noqa["edit"]["changes"][uri])
    assert "scaler.step(optimizer)  # noqa: AMP001\n" in text
    server.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 4},
                                             "contentChanges": [{"text": text}]})
    assert server.diagnostics(uri, version=4)["diagnostics"] == []


def test_save_relints_and_fix_all(server, tmp_path):
    text = "import torch\n\nscaler = torch.cuda.amp.GradScaler()\nwith torch.cuda.amp.autocast():\n    pass\n"
    path = tmp_path / "old.py"
    path.write_text(text)
    uri = _open(server, path, text)
    diags = server.diagnostics(uri)["diagnostics"]
    assert [(d["code"], d["range"]["start"]["line"]) for d in diags] == [("AMP101", 2), ("AMP101", 3)]
    actions = server.request("textDocument/codeAction", {
        "textDocument": {"uri": uri}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
        "context": {"diagnostics": [], "only": ["source.fixAll"]}})
    assert [a["kind"] for a in actions] == ["source.fixAll.amplint"]
    fixed = apply_text_edits(text, actions[0]["edit"]["changes"][uri])
    assert fixed == ('import torch\n\nscaler = torch.amp.GradScaler("cuda")\n'
                     'with torch.amp.autocast("cuda"):\n    pass\n')
    server.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
    assert len(server.diagnostics(uri)["diagnostics"]) == 2


def test_nearest_config_applies(server, tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "pyproject.toml").write_text('[tool.amplint]\nignore = ["AMP002"]\n')
    path = pkg / "train.py"
    uri = _open(server, path, BUGGY)
    assert server.diagnostics(uri)["diagnostics"] == []
    other = tmp_path / "train.py"
    uri2 = _open(server, other, BUGGY)
    assert [d["code"] for d in server.diagnostics(uri2)["diagnostics"]] == ["AMP002"]


def test_info_severity_is_lsp_information(server, tmp_path):
    text = textwrap.dedent("""\
        import torch


        def train(model, optimizer, loader):
            scaler = torch.amp.GradScaler("cuda")
            for x, y in loader:
                with torch.autocast("cuda", dtype=torch.float16):
                    loss = model(x, y)
                    scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
        """)
    uri = _open(server, tmp_path / "t.py", text)
    diags = server.diagnostics(uri)["diagnostics"]
    assert [(d["code"], d["severity"]) for d in diags] == [("AMP105", 3)]
