"""Notebook output: the full format shows each finding's own cell, rows after --fix are those of
the fixed notebook, --add-noqa edits cells, and github/SARIF point at the .ipynb's JSON lines."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

CELL1 = ["import torch\n", "\n", "scaler = torch.amp.GradScaler(\"cuda\")"]
CELL2 = [
    "def train(model, optimizer, loader):\n",
    "    for x, y in loader:\n",
    "        with torch.autocast(\"cuda\", dtype=torch.float16):\n",
    "            loss = model(x, y)\n",
    "        scaler.scale(loss).backward()\n",
    "        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n",
    "        scaler.step(optimizer)",
]
CELL3 = ["old = torch.cuda.amp.GradScaler()"]


def notebook() -> dict:
    def code(src):
        return {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": src}

    return {"cells": [{"cell_type": "markdown", "metadata": {}, "source": ["# title"]}, code(CELL1), code(CELL2),
                      code(CELL3)],
            "metadata": {"language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5}


@pytest.fixture
def nb(tmp_path):
    path = tmp_path / "train.ipynb"
    path.write_text(json.dumps(notebook(), indent=1) + "\n")
    return path


def run(*args, cwd):
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([sys.executable, "-m", "amplint", "--isolated", "--no-cache", *args], capture_output=True,
                          text=True, cwd=cwd, env=env)


def test_concise_rows_per_cell(nb):
    p = run("train.ipynb", cwd=nb.parent)
    assert [line.split(": ")[0] + ": " + line.split(": ")[1].split(" ")[0] for line in p.stdout.splitlines()
            if ": AMP" in line] == [
        "train.ipynb:cell 3:6:9: AMP002", "train.ipynb:cell 3:7:9: AMP001", "train.ipynb:cell 4:1:7: AMP101"]


def test_full_format_shows_each_findings_own_cell(nb):
    p = run("--output-format", "full", "train.ipynb", cwd=nb.parent)
    blocks = p.stdout.split("\n\n")
    amp002 = next(b for b in blocks if "AMP002" in b.splitlines()[0])
    amp101 = next(b for b in blocks if "AMP101" in b.splitlines()[0])
    assert "6 |         torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)" in amp002
    assert "1 | old = torch.cuda.amp.GradScaler()" in amp101
    assert "clip_grad_norm_" not in amp101


def test_rows_after_fix_are_the_fixed_notebooks(nb):
    p = run("--fix", "train.ipynb", cwd=nb.parent)
    assert p.returncode == 1, p.stderr
    # the AMP002 fix inserted `scaler.unscale_(optimizer)` above line 6: AMP001 moved to row 8
    assert [line for line in p.stdout.splitlines() if ": AMP" in line] == [
        "train.ipynb:cell 3:8:9: AMP001 `scaler.step(optimizer)` is not followed by `scaler.update()` before the next step"]
    after = run("train.ipynb", cwd=nb.parent)
    assert [line for line in after.stdout.splitlines() if ": AMP" in line] == [
        line for line in p.stdout.splitlines() if ": AMP" in line]
    cell3 = json.loads(nb.read_text())["cells"][3]["source"]
    assert cell3 == ['old = torch.amp.GradScaler("cuda")']


def test_add_noqa_on_a_notebook(nb):
    p = run("--add-noqa", "train.ipynb", cwd=nb.parent)
    assert p.returncode == 0 and "Added 3 noqa directives." in p.stderr
    cells = json.loads(nb.read_text())["cells"]
    assert cells[2]["source"][5] == "        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # noqa: AMP002\n"
    assert cells[2]["source"][6] == "        scaler.step(optimizer)  # noqa: AMP001"
    assert cells[3]["source"] == ["old = torch.cuda.amp.GradScaler()  # noqa: AMP101"]
    assert run("train.ipynb", cwd=nb.parent).returncode == 0


def test_github_and_sarif_point_at_json_lines(nb):
    raw = nb.read_text().splitlines()
    p = run("--output-format", "github", "train.ipynb", cwd=nb.parent)
    lines = [line for line in p.stdout.splitlines() if line.startswith("::")]
    assert len(lines) == 3
    for line in lines:
        props = dict(kv.split("=", 1) for kv in line.split(" ", 1)[1].split("::")[0].split(","))
        row, col = int(props["line"]), int(props["col"])
        text = raw[row - 1]
        if "AMP002" in line:
            assert text.strip() == '"        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\\n",'
            assert text[col - 1:].startswith("torch.nn.utils.clip_grad_norm_")
        if "AMP001" in line:
            assert text[col - 1:].startswith("scaler.step(optimizer)")
        if "AMP101" in line:
            assert text[col - 1:].startswith("torch.cuda.amp.GradScaler")
            end = int(props["endColumn"])
            assert text[col - 1:end - 1] == "torch.cuda.amp.GradScaler"
        assert "cell " in line.split("::")[-1]
    doc = json.loads(run("--output-format", "sarif", "train.ipynb", cwd=nb.parent).stdout)
    for res in doc["runs"][0]["results"]:
        region = res["locations"][0]["physicalLocation"]["region"]
        text = raw[region["startLine"] - 1]
        assert text[region["startColumn"] - 1:].startswith(("torch.nn.utils.clip", "scaler.step", "torch.cuda.amp"))
        assert res["locations"][0]["logicalLocations"][0]["kind"] == "notebookCell"


def test_escapes_and_string_sources_are_mapped(tmp_path):
    nbd = notebook()
    nbd["cells"][3]["source"] = 'x = "é\\t"; old = torch.cuda.amp.GradScaler()'  # one string, not a list
    path = tmp_path / "s.ipynb"
    path.write_text(json.dumps(nbd))  # ensure_ascii: é is written as \\u00e9
    raw = path.read_text().splitlines()
    p = run("--output-format", "github", "s.ipynb", cwd=tmp_path)
    line = next(x for x in p.stdout.splitlines() if "AMP101" in x)
    props = dict(kv.split("=", 1) for kv in line.split(" ", 1)[1].split("::")[0].split(","))
    assert raw[int(props["line"]) - 1][int(props["col"]) - 1:].startswith("torch.cuda.amp.GradScaler")
