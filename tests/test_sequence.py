"""Scaler sequencing rules (AMP003-AMP009, AMP012, AMP903): messages, fixes, and the flow facts
they read (exclusive arms, loops over optimizers, widening, except handlers)."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import libcst as cst
import pytest
from helpers import CASES, FIXTURES, apply_edits, codes_and_rows, lint

from amplint.model import AmpModel
from amplint.rules import rule_by_code

CODES = ("AMP003", "AMP004", "AMP005", "AMP006", "AMP007", "AMP008", "AMP009", "AMP012", "AMP903")

LOOP = """\
import torch


def train(model, optimizer, loader):
    scaler = torch.amp.GradScaler("cuda")
    for i, (x, y) in enumerate(loader):
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y)
{body}
"""


def _src(body: str) -> str:
    return LOOP.format(body=textwrap.indent(textwrap.dedent(body), " " * 8))


def _diags(source: str, code: str):
    return [d for d in lint(source, select=(code,)) if d.code == code]


def _fixed(source: str, code: str, applicability: str | None = None) -> str:
    diags = _diags(source, code)
    assert diags, f"no {code} finding"
    fix = diags[0].fix
    assert fix is not None, f"{code}: no fix offered"
    if applicability is not None:
        assert fix.applicability == applicability
    out = apply_edits(source, fix.edits)
    compile(out, "<fixed>", "exec")
    return out


def _model(source: str) -> AmpModel:
    return AmpModel(cst.parse_module(textwrap.dedent(source)))


# --- messages ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "code, body, pattern",
    [
        ("AMP003", "scaler.scale(loss).backward()\noptimizer.step()\n",
         r"`optimizer.step\(\)` bypasses `scaler` on scaled gradients: use `scaler.step\(optimizer\)`"),
        ("AMP004", "loss.backward()\nscaler.step(optimizer)\nscaler.update()\n",
         r"`loss.backward\(\)` is not scaled but `scaler.step\(\)` consumes"),
        ("AMP005", "scaler.scale(loss).backward()\nscaler.step(optimizer)\nscaler.unscale_(optimizer)\nscaler.update()\n",
         r"runs after `scaler.step\(optimizer\)` in the same iteration"),
        # an unscale_ met after an earlier unscale_ on one path and after the step on another:
        # the same message whatever order the paths are found in (the earlier unscale_ first)
        ("AMP005", "scaler.scale(loss).backward()\nif i % 2:\n    scaler.step(optimizer)\nelse:\n"
                   "    scaler.unscale_(optimizer)\nscaler.unscale_(optimizer)\nscaler.update()\n",
         r"unscales `optimizer` again after an earlier `scaler.unscale_\(optimizer\)`"),
        ("AMP006", "scaler.scale(loss).backward()\nif i % 4 == 0:\n    scaler.step(optimizer)\nscaler.update()\n",
         r"`scaler.update\(\)` can run with no `scaler.step\(\)` or `unscale_\(\)`"),
        ("AMP009", "scaler.scale(loss).backward(retain_graph=True)\nloss.backward()\nscaler.step(optimizer)\nscaler.update()\n",
         r"`loss.backward\(\)` adds unscaled gradients to `scaler`'s scaled ones"),
        ("AMP012", "scaler.scale(loss).backward()\noptimizer.zero_grad()\nscaler.step(optimizer)\nscaler.update()\n",
         r"`optimizer.zero_grad\(\)` wipes the gradients of the scaled backward before `scaler.step\(optimizer\)`"),
    ],
)
def test_messages(code, body, pattern):
    diags = _diags(_src(body), code)
    assert len(diags) == 1
    assert re.search(pattern, diags[0].message), diags[0].message


def test_amp005_messages_name_the_first_unscale():
    diags = _diags((CASES / "sequence" / "bad_unscale_twice.py").read_text(), "AMP005")
    messages = [d.message for d in diags]
    assert any("in `train_helper_and_loop()`" in m for m in messages)
    assert any("per accumulation micro-step" in m for m in messages)


def test_amp008_message_names_the_helper():
    diags = _diags((CASES / "sequence" / "bad_scaler_created_in_loop.py").read_text(), "AMP008")
    assert [d.location.row for d in diags] == [6, 16, 38]
    assert "every iteration of the loop" in diags[0].message
    assert "every call of `train_step()`" in diags[1].message
    assert "every call of `training_step()`" in diags[2].message


def test_amp903_is_off_by_default():
    assert rule_by_code("AMP903").default_enabled is False
    src = (CASES / "sequence" / "bad_scheduler_after_update.py").read_text()
    assert not [d for d in lint(src, select=()) if d.code == "AMP903"]
    assert [d.code for d in lint(src, select=("AMP903",))] == ["AMP903"]


# --- fixes ---------------------------------------------------------------------------------


def test_amp003_fix_steps_through_the_scaler():
    src = _src("scaler.scale(loss).backward()\noptimizer.step()\nscaler.update()\n")
    out = _fixed(src, "AMP003", "safe")
    assert "        scaler.step(optimizer)\n        scaler.update()\n" in out
    assert codes_and_rows(out) == []


def test_amp003_fix_turns_bad_fixture_into_good():
    bad = (FIXTURES / "AMP003" / "bad.py").read_text()
    good = (FIXTURES / "AMP003" / "good.py").read_text()
    out = _fixed(bad, "AMP003", "safe")
    body = lambda s: re.sub(r"\s*# error:.*", "", s.split('"""', 2)[2])  # noqa: E731
    assert body(out) == body(good)


@pytest.mark.parametrize(
    "body",
    [
        "scaler.scale(loss).backward()\noptimizer.step(closure)\nscaler.update()\n",  # a closure
        "scaler.scale(loss).backward()\nif i == 0:\n    optimizer.step()\nelse:\n    pass\nscaler.step(optimizer)\nscaler.update()\n",
    ],
)
def test_amp003_no_fix(body):
    diags = _diags(_src(body), "AMP003")
    assert diags and diags[0].fix is None


def test_amp004_fix_scales_the_loss():
    src = _src("loss.backward()\nscaler.step(optimizer)\nscaler.update()\n")
    out = _fixed(src, "AMP004", "safe")
    assert "scaler.scale(loss).backward()" in out
    assert codes_and_rows(out) == []


def test_amp009_fix_scales_the_aux_loss():
    bad = (FIXTURES / "AMP009" / "bad.py").read_text()
    out = _fixed(bad, "AMP009", "safe")
    assert "scaler.scale(aux_loss).backward()  # error: AMP009" in out
    assert not [d for d in lint(out) if d.code in CODES]


def test_amp005_fix_deletes_the_duplicate():
    src = _src("scaler.scale(loss).backward()\nscaler.unscale_(optimizer)\nprint(i)\nscaler.unscale_(optimizer)\n"
               "scaler.step(optimizer)\nscaler.update()\n")
    out = _fixed(src, "AMP005", "safe")
    assert out.count("scaler.unscale_(optimizer)") == 1
    assert codes_and_rows(out) == []


def test_amp005_no_fix_for_accumulation():
    diags = _diags((FIXTURES / "AMP005" / "bad.py").read_text(), "AMP005")
    assert len(diags) == 1 and diags[0].fix is None


def test_amp006_fix_moves_update_under_the_guard():
    bad = (FIXTURES / "AMP006" / "bad.py").read_text()
    out = _fixed(bad, "AMP006", "unsafe")
    assert "            optimizer.zero_grad(set_to_none=True)\n            scaler.update()\n" in out
    assert not [d for d in lint(out) if d.code in CODES]


def test_amp007_fix_deletes_the_first_update():
    bad = (FIXTURES / "AMP007" / "bad.py").read_text()
    out = _fixed(bad, "AMP007", "unsafe")
    assert out.count("        scaler.update()") == 1
    assert "scaler.step(optimizer)\n        scaler.step(gain_optimizer)\n" in out
    assert not [d for d in lint(out) if d.code in CODES]


def test_amp008_fix_hoists_the_constructor():
    bad = (FIXTURES / "AMP008" / "bad.py").read_text()
    out = _fixed(bad, "AMP008", "unsafe")
    assert "    scaler = torch.amp.GradScaler(device, init_scale=2.0**24)\n    for x, y in batches:\n" in out
    assert not [d for d in lint(out) if d.code in CODES]


def test_amp008_no_fix_in_helper():
    diags = _diags((CASES / "sequence" / "bad_scaler_created_in_loop.py").read_text(), "AMP008")
    assert diags[0].fix is not None and diags[1].fix is None and diags[2].fix is None


# --- precision: the flow facts the rules rely on --------------------------------------------


def test_update_in_eval_code_is_left_to_amp201():
    src = _src("scaler.scale(loss).backward()\nscaler.step(optimizer)\nscaler.update()\n") + textwrap.dedent(
        """
        @torch.no_grad()
        def evaluate(model, loader, scaler):
            for x, y in loader:
                with torch.autocast("cuda", dtype=torch.float16):
                    model(x, y)
                scaler.update()
        """
    )
    codes = {c for c, _ in codes_and_rows(src)}
    assert "AMP201" in codes and "AMP006" not in codes


def test_alternatives_cover_if_elif_else_and_conditional_expressions():
    m = _model(
        """
        import torch
        scaler = torch.amp.GradScaler("cuda")
        if a:
            f1()
        elif b:
            f2()
        else:
            f3()
        x = g1() if c else g2()
        match d:
            case 1:
                h1()
            case _:
                h2()
        """
    )
    by_text = {c.text: c.node for c in m.calls}
    alts = lambda name: {c.text for c in m.calls if c.node in m.flow.alternatives(by_text[name])}  # noqa: E731
    assert alts("f1") == {"f2", "f3"}
    assert alts("f2") == {"f1", "f3"}
    assert alts("f3") == {"f1", "f2"}
    assert alts("g1") == {"g2"}
    assert alts("h2") == {"h1"}
    assert alts("torch.amp.GradScaler") == set()


def test_loop_over_optimizers_runs_at_least_once():
    src = _src("scaler.scale(loss).backward()\nfor opt in [optimizer]:\n    scaler.step(opt)\nscaler.update()\n")
    assert codes_and_rows(src) == []


def test_join_does_not_invent_ready_state():
    """Widening to one state must not turn 'stepped on some paths' into 'READY'."""
    from amplint.model.flow.state import STEPPED, UNSCALED, ScalerFacts, State, join

    a = State(scalers=(("s", ScalerFacts(ready=True, stages=frozenset({("o", STEPPED, None)}))),))
    b = State(scalers=(("s", ScalerFacts(ready=True, stages=frozenset({("o", UNSCALED, None)}))),))
    j = join(a, b)
    assert not j.facts("s").all_ready
    assert j.facts("s").stage_of("o") is None


def test_widened_paths_are_speculative():
    """Many correlated flags before another correlated pair: the flow widens and forgets the
    first ``if fast:`` outcome; no rule reports the paths that widening made up."""
    flags = "".join(f"if flag{k}:\n    print({k})\nif flag{k}:\n    print({k})\n" for k in range(8))
    body = flags + textwrap.dedent(
        """\
        if fast:
            scaler.scale(loss).backward()
        else:
            loss.backward()
        if fast:
            scaler.step(optimizer)
            scaler.update()
        else:
            optimizer.step()
        """
    )
    assert codes_and_rows(_src(body)) == []


def test_handler_paths_reach_the_update():
    # an OOM in backward skips the step; the handler falls through to an update with no inf
    # checks recorded (``AssertionError``): the update is not dominated by the step (AMP006)
    src = _src(
        "try:\n    scaler.scale(loss).backward()\n    scaler.step(optimizer)\nexcept RuntimeError:\n    print('oom')\n"
        "scaler.update()\n"
    )
    assert "AMP006" in {c for c, _ in codes_and_rows(src)}


def test_handler_paths_stay_speculative_for_other_rules():
    # the same handler path does not make the next iteration's step an AMP001
    src = _src(
        "try:\n    scaler.scale(loss).backward()\n    scaler.step(optimizer)\nexcept RuntimeError:\n    print('oom')\n"
        "    continue\nscaler.update()\n"
    )
    assert {c for c, _ in codes_and_rows(src)} == set()


def test_exception_on_its_way_out_of_finally_is_no_finding():
    src = _src(
        "try:\n    scaler.scale(loss).backward()\n    scaler.step(optimizer)\nexcept RuntimeError:\n    raise\n"
        "finally:\n    scaler.update()\n"
    )
    assert "AMP006" not in {c for c, _ in codes_and_rows(src)}


def test_self_backward_method_is_followed():
    src = textwrap.dedent(
        """\
        import torch


        class T:
            def __init__(self, model, opt):
                self.model, self.opt = model, opt
                self.scaler = torch.amp.GradScaler("cuda")

            def backward(self, loss):
                self.scaler.scale(loss).backward()

            def fit(self, loader):
                for x in loader:
                    with torch.autocast("cuda", dtype=torch.float16):
                        loss = self.model(x)
                    self.backward(loss)
                    self.opt.zero_grad()  # error: AMP012
                    self.scaler.step(self.opt)
                    self.scaler.update()
        """
    )
    assert codes_and_rows(src) == [("AMP012", 17)]


def test_typing_cast_of_scaled_loss_is_scaled():
    src = _src("loss = typing.cast(torch.Tensor, scaler.scale(loss))\nloss.backward()\nscaler.step(optimizer)\n"
               "scaler.update()\n").replace("import torch\n", "import typing\n\nimport torch\n")
    assert codes_and_rows(src) == []


# --- robustness ------------------------------------------------------------------------------


def _our_files() -> list[Path]:
    files = sorted((CASES / "sequence").glob("*.py"))
    files += [FIXTURES / code / name for code in CODES for name in ("bad.py", "good.py")]
    return files


@pytest.mark.parametrize("path", _our_files(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fixes_compile_and_do_not_break_files(path):
    src = path.read_text()
    for d in lint(src, select=CODES):
        if d.fix is not None:
            compile(apply_edits(src, d.fix.edits), str(path), "exec")
