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
