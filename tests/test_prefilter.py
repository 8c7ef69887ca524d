"""The prefilter (bytes, then CPython's AST) never drops a file with a finding."""

from __future__ import annotations

import re

import pytest
from corpus import ensure_corpus
from helpers import CASES, FIXTURES

from amplint.config import CliOverrides, build_settings
from amplint.engine import Linter
from amplint.rules import all_rules


def _linter(select=("ALL",)) -> Linter:
    return Linter(build_settings([], CliOverrides(isolated=True, select=list(select)), all_rules()))


def _compare(paths, linter: Linter):
    for p in paths:
        data = p.read_bytes()
        on = linter.check_bytes(data, str(p), explicit=False)
        off = linter.check_bytes(data, str(p), explicit=False, force=True)
        assert not on.errors and not off.errors, (p, on.errors, off.errors)
        # (AMP000 is the syntax gate's, not the prefilter's: a notebook exported with its escape
        # lines is one either way)
        got = [(d.code, d.location) for d in on.diagnostics if d.code != "AMP000"]
        want = [(d.code, d.location) for d in off.diagnostics if d.code != "AMP000"]
        assert got == want, f"{p}: prefilter dropped {set(want) - set(got)}"


def test_prefilter_keeps_every_fixture_and_case():
    paths = sorted(FIXTURES.rglob("*.py")) + sorted(CASES.rglob("*.py"))
    _compare(paths, _linter())
    _compare(paths, _linter(("AMP0", "AMP1", "AMP2")))


@pytest.mark.parametrize("names", [(), ("my_loss_scaler", "amp.trainer.scaler")])
def test_file_triggers_answer_as_each_rules_prefilter(names):
    """The per-file trigger memo the linter asks for each rule gives the rule's own prefilter
    answer, on every fixture and case and on texts made to pass one alternative only."""
    from amplint.prefilter import FileTriggers, Prefilter

    rules = all_rules()
    texts = [p.read_bytes() for p in sorted(FIXTURES.rglob("*.py")) + sorted(CASES.rglob("*.py"))]
    texts += [b"x = 1\n", b"y.scale(loss)\n", b"y.scale(loss).backward()\n", b"# noqa: AMP001\n",
              b"with autocast_mode():\n", b"from torch.cuda import amp\n", b"my_loss_scaler.step(opt)\n",
              b"accelerator.accumulate(m)\naccelerator.clip_grad_norm_(p, 1)\n", b"GradScaler\n"]
    for data in texts:
        present = FileTriggers(data, names)
        for r in rules:
            assert present.passes(r.triggers) == Prefilter(r.triggers, names)(data), (r.code, data[:80])


def test_prefilter_drops_files_without_amp():
    linter = _linter()
    assert not linter.prefilter(b"import torch\n\nx = torch.ones(3).half()\nloss.backward()\n")
    assert not linter.prefilter(b"from sklearn.preprocessing import MinMaxScaler\nimport numpy\n")
    assert linter.prefilter(b"s = torch.amp.GradScaler()\n")
    assert linter.prefilter(b"grad_scaler.step(opt)\n")
    assert linter.prefilter(b"amp_state.scale(loss).backward()\n")
    assert linter.prefilter(b"with torch.autocast('cuda'):\n    pass\n")
    assert linter.prefilter(b"from torch.cuda import amp\n")


NEAR_MISS = re.compile(rb"\.backward\(|clip_grad_norm_|\.half\(\)|torch\.float16")


@pytest.mark.realworld
def test_prefilter_is_sound_on_corpus_near_misses():
    """Corpus files of the AMP packages that fail the prefilter but train or cast (``.backward(``,
    ``clip_grad_norm_``, ``.half()``, ``float16``) are linted without it: no finding appears."""
    corpus = ensure_corpus()
    linter = _linter()
    paths = []
    for p in sorted(corpus.rglob("*.py")):
        if p.relative_to(corpus).parts[0].startswith(("torch-", "transformers-")):
            continue
        data = p.read_bytes()
        if not linter.prefilter(data) and NEAR_MISS.search(data):
            paths.append(p)
    assert len(paths) > 100
    for p in paths:
        off = linter.check_bytes(p.read_bytes(), str(p), explicit=False, force=True)
        assert not off.errors, off.errors
        assert [d for d in off.diagnostics if d.code != "AMP000"] == [], p


@pytest.mark.realworld
def test_ast_screen_is_sound_on_corpus():
    """Files that pass the byte prefilter but that the AST screen stops: linted fully, silent."""
    from amplint.engine import _cpython_parse, decode
    from amplint.prefilter import FileTriggers
    from amplint.screen import SCREENS, facts

    corpus = ensure_corpus()
    linter = _linter()
    screened = 0
    for p in sorted(corpus.rglob("*.py")):
        data = p.read_bytes()
        if not linter.prefilter(data):
            continue
        present = FileTriggers(data, linter.settings.options.scaler_names)
        rules = [r for r in linter.rules if present.passes(r.triggers)]
        if not any(r.screen for r in rules):
            continue
        tree, err = _cpython_parse(decode(data).text, str(p))
        if err is not None:
            continue
        f = facts(tree)
        dropped = {r.code for r in rules if r.screen and not SCREENS[r.screen](f)}
        if not dropped:
            continue
        screened += 1
        off = linter.check_bytes(data, str(p), explicit=False, force=True)
        assert not [d for d in off.diagnostics if d.code in dropped], p
    assert screened > 50


@pytest.mark.slow
def test_prefilter_is_sound_on_the_whole_corpus():
    """Every corpus file, prefilter off (minutes): run with `pytest -m slow`."""
    corpus = ensure_corpus()
    linter = _linter()
    for p in sorted(corpus.rglob("*.py")):
        if not linter.prefilter(p.read_bytes()):
            off = linter.check_bytes(p.read_bytes(), str(p), explicit=False, force=True)
            assert [d for d in off.diagnostics if d.code != "AMP000"] == [], p
