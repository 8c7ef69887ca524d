"""Notebooks: cells linted as one module, findings per cell, magics, fixes in place."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

NB = Path(__file__).parent / "data" / "amp002_cell3.ipynb"


def run(*args):
    return subprocess.run([sys.executable, "-m", "amplint", "--isolated", "--no-cache", *args], capture_output=True, text=True)


def test_reported_at_cell_3():
    p = run(str(NB))
    assert p.returncode == 1
    assert f"{NB}:cell 3:7:9: AMP002" in p.stdout
    data = json.loads(run("--output-format", "json", str(NB)).stdout)
    assert [(d["code"], d["cell"], d["location"]["row"]) for d in data] == [("AMP002", 3, 7)]


def test_magics_do_not_break_parsing():
    # cell 2 holds %matplotlib, !nvidia-smi, files = !ls; cell 4 %%time and `train?`; cell 5 %%bash
    p = run(str(NB))
    assert "AMP000" not in p.stdout


def test_fix_in_place_changes_only_the_edited_cell(tmp_path):
    nb = tmp_path / "nb.ipynb"
    shutil.copy(NB, nb)
    before = json.loads(nb.read_text())
    p = run("--fix", str(nb))
    assert p.returncode == 0, p.stdout
    after = json.loads(nb.read_text())
    assert len(after["cells"]) == len(before["cells"])
    for i, (b, a) in enumerate(zip(before["cells"], after["cells"]), 1):
        if i == 3:
            assert "        scaler.unscale_(optimizer)\n" in a["source"]
            assert a["source"][-1] == "        scaler.update()", "no trailing newline added"
        else:
            assert a == b, f"cell {i} changed"
    assert run(str(nb)).returncode == 0
    # the file keeps Jupyter's layout (indent 1) and a second --fix changes nothing
    text = nb.read_text()
    assert text.startswith('{\n "cells": [\n')
    run("--fix", str(nb))
    assert nb.read_text() == text


def test_broken_notebook_is_a_diagnostic(tmp_path):
    nb = tmp_path / "bad.ipynb"
    nb.write_text("{not json")
    p = run(str(nb))
    assert p.returncode == 1
    assert "AMP000 not a valid notebook" in p.stdout
    assert "Traceback" not in p.stderr


def test_api_on_notebook_source():
    import amplint

    diags = amplint.lint_source(NB.read_bytes(), filename="x.ipynb")
    assert [(d.code, d.cell, d.location.row) for d in diags] == [("AMP002", 3, 7)]


LOOP_WITHOUT_UPDATE = """import torch
model = torch.nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
scaler = torch.amp.GradScaler("cuda")
for x, y in loader:
    opt.zero_grad()
    with torch.autocast("cuda", dtype=torch.float16):
        loss = torch.nn.functional.mse_loss(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(opt)
"""


def test_fix_that_inserts_at_the_end_of_a_cell_followed_by_another(tmp_path):
    # the insertion lands where the next cell's boundary begins: it was shown as fixable, but
    # --fix and --diff did nothing
    cell = lambda i, src: {"cell_type": "code", "execution_count": None, "id": i, "metadata": {}, "outputs": [],
                           "source": src.splitlines(True)}
    nb = tmp_path / "two.ipynb"
    nb.write_text(json.dumps({"cells": [cell("a", LOOP_WITHOUT_UPDATE), cell("b", "print(1)\n")], "metadata": {},
                              "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n")
    data = json.loads(run("--unsafe-fixes", "--output-format", "json", str(nb)).stdout)
    assert [(d["code"], d["cell"]) for d in data] == [("AMP001", 1)] and data[0]["fix"] is not None
    p = run("--diff", "--unsafe-fixes", str(nb))
    assert p.returncode == 1 and '+    "    scaler.update()\\n"' in p.stdout
    p = run("--fix", "--unsafe-fixes", str(nb))
    assert p.returncode == 0, p.stdout
    cells = json.loads(nb.read_text())["cells"]
    assert cells[0]["source"][-2:] == ["    scaler.step(opt)\n", "    scaler.update()\n"]
    assert cells[1]["source"] == ["print(1)\n"]


def test_an_integer_too_long_for_int_in_the_json_is_not_an_internal_error(tmp_path):
    # a 5,000-digit number in the metadata ended the run with "internal error: ValueError" (exit 2)
    cell = {"cell_type": "code", "execution_count": None, "id": "a", "metadata": {}, "outputs": [],
            "source": LOOP_WITHOUT_UPDATE.splitlines(True)}
    text = json.dumps({"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)
    big = "9" * 5000
    nb = tmp_path / "big.ipynb"
    nb.write_text(text[:-1].rstrip() + f',\n "big": {big}\n}}\n')
    p = run(str(nb))
    assert p.returncode == 1 and "AMP001" in p.stdout and "internal error" not in p.stderr, p.stderr
    p = run("--fix", "--unsafe-fixes", str(nb))
    assert p.returncode == 0 and f'"big": {big}' in nb.read_text()


def test_a_broken_cell_does_not_hide_the_findings_of_the_others(tmp_path):
    # Jupyter runs each cell alone: a cell that is not Python used to make the whole notebook one
    # AMP000 (its column read from the .ipynb file on disk, not from the cell)
    cell = lambda i, src: {"cell_type": "code", "execution_count": None, "id": i, "metadata": {}, "outputs": [],
                           "source": src.splitlines(True)}
    nb = tmp_path / "broken.ipynb"
    nb.write_text(json.dumps({"cells": [cell("a", LOOP_WITHOUT_UPDATE), cell("b", "def f(:\n  pass\n"),
                                        cell("c", "print(1)\n")], "metadata": {}, "nbformat": 4, "nbformat_minor": 5},
                             indent=1) + "\n")
    before = nb.read_bytes()
    data = json.loads(run("--output-format", "json", str(nb)).stdout)
    assert [(d["code"], d["cell"], d["location"]["row"], d["location"]["column"]) for d in data] == [
        ("AMP001", 1, 10, 5), ("AMP000", 2, 1, 7)]
    assert all(d["fix"] is None for d in data)
    p = run("--fix", "--unsafe-fixes", str(nb))
    assert p.returncode == 1 and nb.read_bytes() == before
