"""Single-file determinism on real packages (issue 14): linting a file alone, as pre-commit does
with one changed file, gives the findings that linting its whole package gives.

The packages are the corpus releases with known AMP bugs (their protocol spans modules and class
hierarchies); every file with protocol evidence is linted alone, each with a fresh linter (no
model of another module carried over), and compared with one linter that went through the
whole package. Files without evidence are never analysed in either mode."""

from __future__ import annotations

import pytest
from corpus import ensure_corpus

from amplint.config import CliOverrides, build_settings
from amplint.engine import Linter
from amplint.project import PROTOCOL_EVIDENCE
from amplint.rules import all_rules

pytestmark = pytest.mark.realworld

PACKAGES = ("allennlp-2.10.1", "yolov5-7.0.14", "super-gradients-3.0.6", "ultralytics-8.3.202")


def _findings(linter: Linter, path) -> list[tuple[str, int, int]]:
    result = linter.check_bytes(path.read_bytes(), str(path), explicit=True)
    assert not result.errors, result.errors
    return sorted((d.code, d.location.row, d.location.column) for d in result.diagnostics)


@pytest.mark.parametrize("package", PACKAGES)
def test_each_file_alone_matches_its_package_run(package):
    corpus = ensure_corpus()
    settings = build_settings([], CliOverrides(isolated=True), all_rules())
    files = sorted((corpus / package).rglob("*.py"))
    together = Linter(settings)
    whole = {f: _findings(together, f) for f in files}
    diffs = []
    checked = 0
    for f in files:
        if not PROTOCOL_EVIDENCE.search(f.read_bytes()):
            continue
        checked += 1
        alone = _findings(Linter(settings), f)
        if alone != whole[f]:
            diffs.append((str(f.relative_to(corpus)), alone, whole[f]))
    assert checked > 10
    assert diffs == []
