"""AMP010, AMP011, AMP013-AMP016, AMP901, AMP902: messages, fixes, and shapes a case file can't hold."""

from __future__ import annotations

import textwrap

import pytest
from helpers import CASES, FIXTURES, apply_edits, lint

from amplint.config import CliOverrides, build_settings
from amplint.engine import Linter
from amplint.rules import all_rules

CODES = ("AMP010", "AMP011", "AMP013", "AMP014", "AMP015", "AMP016", "AMP901", "AMP902")

LOOP = """\
import torch
import torch.nn.functional as F


def train(model, optimizer, loader):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = F.mse_loss(model(x), y)
{body}
"""


def _src(body: str) -> str:
    return LOOP.format(body=textwrap.indent(textwrap.dedent(body), " " * 8))


def _only(source: str, code: str):
    diags = [d for d in lint(source, select=(code,)) if d.code == code]
    return diags


def _fixed(source: str, code: str, index: int = 0) -> str:
    diags = _only(source, code)
    assert diags, f"no {code} finding"
    fix = diags[index].fix
    assert fix is not None, f"{code}: no fix offered"
    out = apply_edits(source, fix.edits)
    compile(out, "<fixed>", "exec")
    return out


# --- no internal errors on any file of ours --------------------------------------------


def _our_files():
    files = sorted((CASES / "scaler").glob("*.py"))
    files += [FIXTURES / code / name for code in CODES for name in ("bad.py", "good.py")]
    return files


@pytest.mark.parametrize("path", _our_files(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_no_internal_errors(path):
    settings = build_settings([], CliOverrides(isolated=True, select=["ALL"]), all_rules())
    result = Linter(settings).check_bytes(path.read_bytes(), str(path))
    assert result.errors == []


# --- AMP010 -------------------------------------------------------------------------------


def test_amp010_message_names_the_scaler():
    src = _src(
        """
        grads = torch.autograd.grad(scaler.scale(loss), list(model.parameters()), create_graph=True)
        loss = loss + sum(g.norm() for g in grads)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        """
    )
    (d,) = _only(src, "AMP010")
    assert d.message == "Gradients of `scaler.scale(...)` are used without dividing by `scaler.get_scale()`"
    assert d.fix is None


def test_amp010_logged_scale_is_not_unscaling_but_inv_scale_is():
    bad = _src(
        """
        grads = torch.autograd.grad(scaler.scale(loss), list(model.parameters()), create_graph=True)
        loss = loss + sum(g.norm() for g in grads)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        print(scaler.get_scale())
        """
    )
    assert len(_only(bad, "AMP010")) == 1
    good = bad.replace("loss + sum(g.norm() for g in grads)", "loss + sum(g.norm() for g in grads) / scaler.get_scale()")
    assert _only(good, "AMP010") == []


def test_amp010_discarded_or_unscaled_result():
    src = _src(
        """
        torch.autograd.grad(scaler.scale(loss), [x], retain_graph=True)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        """
    )
    assert _only(src, "AMP010") == []


# --- AMP011 -------------------------------------------------------------------------------


def test_amp011_deprecated_scaler_and_message():
    src = textwrap.dedent(
        """\
        import torch
        from torch.cuda.amp import GradScaler

        scaler = GradScaler()

        def step(optimizer, closure):
            scaler.step(optimizer, closure)
            scaler.update()
        """
    )
    (d,) = _only(src, "AMP011")
    assert d.message == "`scaler.step()` is given a closure: GradScaler does not support closure optimizers"
    assert d.location.row == 7


def test_amp011_star_args_and_single_argument():
    src = _src(
        """
        scaler.scale(loss).backward()
        scaler.step(optimizer, *extra)
        scaler.step(optimizer=optimizer)
        scaler.update()
        """
    )
    assert _only(src, "AMP011") == []


# --- AMP013 -------------------------------------------------------------------------------

CKPT = """\
import torch


def train(model, optimizer, loader, path):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x).sum()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    {save}
"""


def test_amp013_fix_adds_the_scaler_to_a_dict_literal():
    src = CKPT.format(save="torch.save({'model': model.state_dict(), 'optimizer': optimizer.state_dict()}, path)")
    (d,) = _only(src, "AMP013")
    assert d.location.row == 13
    assert d.fix.applicability == "safe"
    assert "`scaler.state_dict()`" in d.message
    out = _fixed(src, "AMP013")
    assert "'optimizer': optimizer.state_dict(), 'scaler': scaler.state_dict()}" in out
    assert _only(out, "AMP013") == []


def test_amp013_fix_for_dict_call_and_empty_dict():
    src = CKPT.format(save="torch.save(dict(model=model.state_dict(), optimizer=optimizer.state_dict()), path)")
    out = _fixed(src, "AMP013")
    assert "optimizer=optimizer.state_dict(), scaler=scaler.state_dict())" in out
    src = CKPT.format(save="ckpt = {}\n    ckpt['optimizer'] = optimizer.state_dict()\n    torch.save(ckpt, path)")
    out = _fixed(src, "AMP013")
    assert 'ckpt = {"scaler": scaler.state_dict()}' in out
    assert _only(out, "AMP013") == []


def test_amp013_no_fix_when_the_scaler_may_be_none():
    src = CKPT.format(save="torch.save({'optimizer': optimizer.state_dict()}, path)").replace(
        'scaler = torch.amp.GradScaler("cuda")', 'scaler = torch.amp.GradScaler("cuda") if amp else None'
    ).replace("def train(model,", "def train(amp, model,")
    (d,) = _only(src, "AMP013")
    assert d.fix is None


@pytest.mark.parametrize(
    "save",
    [
        "torch.save(model.state_dict(), path)",  # weights only
        "torch.save({'model': model.state_dict(), 'epoch': 3}, path)",  # no optimizer state
        "torch.save({'optimizer': optimizer.state_dict(), **extra}, path)",  # unknown content
        "torch.save({'optimizer': optimizer.state_dict(), 'grad_scaler': scaler}, path)",  # pickled scaler
        "ckpt = {'optimizer': optimizer.state_dict()}\n    ckpt.update(extra)\n    torch.save(ckpt, path)",
        "ckpt = {'optimizer': optimizer.state_dict()}\n    ckpt[name] = value\n    torch.save(ckpt, path)",
        "ckpt = {'optimizer': optimizer.state_dict()}\n    hooks.on_save(ckpt)\n    torch.save(ckpt, path)",
        "torch.save({'optimizer': optimizer.state_dict()}, path)\n    scaler.load_state_dict(torch.load('s.pt'))",
    ],
)
def test_amp013_silent(save):
    assert _only(CKPT.format(save=save), "AMP013") == []


def test_amp013_deprecated_scaler_in_a_script():
    src = textwrap.dedent(
        """\
        import torch
        from torch.cuda import amp


        def train(hyp, opt, device, amp_on=True):
            model, optimizer, loader, last = hyp
            scaler = amp.GradScaler(enabled=amp_on)
            for epoch in range(3):
                for x, y in loader:
                    with amp.autocast(amp_on):
                        loss = model(x).sum()
                    scaler.scale(loss).backward()
                    scaler.step(optimizer)
                    scaler.update()
                    optimizer.zero_grad()
                ckpt = {'epoch': epoch, 'model': model, 'optimizer': optimizer.state_dict(), 'opt': vars(opt)}
                torch.save(ckpt, last)
                del ckpt
        """
    )
    (d,) = _only(src, "AMP013")
    assert d.location.row == 17
    out = _fixed(src, "AMP013")
    assert "'opt': vars(opt), 'scaler': scaler.state_dict()}" in out


@pytest.mark.realworld
def test_amp013_known_corpus_bugs():
    from corpus import ensure_corpus

    from amplint.engine import lint_paths

    corpus = ensure_corpus()

    files = {
        "ultralytics-8.3.202/ultralytics/engine/trainer.py": 1,
        "allennlp-2.10.1/allennlp/training/gradient_descent_trainer.py": 1,
        "yolov5-7.0.14/yolov5/train.py": 1,
        "ultralytics-8.4.190/ultralytics/engine/trainer.py": 0,
        "timm-1.0.31/timm/utils/cuda.py": 0,
    }
    for rel, count in files.items():
        path = corpus / rel
        assert path.is_file(), path
        diags = lint_paths([str(path)], select=["AMP013"])
        assert len(diags) == count, (rel, diags)


# --- AMP014 -------------------------------------------------------------------------------

HALF = """\
import torch


def main(loader, Net, device):
    {convert}
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x).sum()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
"""


@pytest.mark.parametrize(
    "convert, fixed",
    [
        ("model = Net().cuda().half()", "model = Net().cuda()"),
        ("model = Net()\n    model.half()", "model = Net()\n    optimizer"),
        ("model = Net()\n    model.to(device, torch.float16)", "model = Net()\n    model.to(device)\n"),
        ("model = Net()\n    model = model.to(dtype=torch.half)", "model = Net()\n    optimizer"),
    ],
)
def test_amp014_unsafe_fix(convert, fixed):
    src = HALF.format(convert=convert)
    (d,) = _only(src, "AMP014")
    assert d.fix.applicability == "unsafe"
    out = _fixed(src, "AMP014")
    assert fixed in out
    assert _only(out, "AMP014") == []


def test_amp014_message():
    (d,) = _only(HALF.format(convert="model = Net().cuda().half()"), "AMP014")
    assert d.message.startswith("`Net().cuda().half()` makes the parameters of `model` fp16")


def test_amp014_sole_statement_becomes_pass():
    # under a plain condition the model the scaler steps is fp16 whenever it holds: reported;
    # under one that reads like inference: not
    src = HALF.format(convert="model = Net()\n    if True:\n        model.half()")
    assert [d.location.row for d in _only(src, "AMP014")] == [7]
    src = HALF.format(convert="model = Net()\n    if device.export_half:\n        model.half()")
    assert _only(src, "AMP014") == []
    src = textwrap.dedent(
        """\
        import torch


        def train(model, optimizer, loader):
            scaler = torch.amp.GradScaler("cuda")
            with torch.no_grad():
                pass
            for _ in range(1):
                model.half()
            for x in loader:
                with torch.autocast("cuda", dtype=torch.float16):
                    loss = model(x).sum()
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
        """
    )
    out = _fixed(src, "AMP014")
    assert "for _ in range(1):\n        pass\n" in out


def test_amp014_disabled_scaler():
    src = HALF.format(convert="model = Net().half()").replace('GradScaler("cuda")', 'GradScaler("cuda", enabled=False)')
    assert _only(src, "AMP014") == []


# --- AMP015 -------------------------------------------------------------------------------


def test_amp015_inline_fix():
    src = _src(
        """
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        total = scaler.scale(loss / 4).item()
        print(float(scaler.scale(loss * 2)))
        """
    )
    diags = _only(src, "AMP015")
    assert [d.location.row for d in diags] == [15, 16]
    assert diags[0].message == "The output of `scaler.scale()` is used as a metric: it is multiplied by the loss scale"
    out = apply_edits(src, diags[0].fix.edits)
    assert "total = (loss / 4).item()" in out
    out = apply_edits(src, diags[1].fix.edits)
    assert "print(float(loss * 2))" in out


def test_amp015_rebinding_fix_renames_the_scaled_value():
    src = _src(
        """
        loss = scaler.scale(loss)
        loss.backward()
        scaler.step(optimizer)
        scaler.update()
        print(loss.item())
        """
    )
    out = _fixed(src, "AMP015")
    assert "scaled_loss = scaler.scale(loss)\n        scaled_loss.backward()" in out
    assert "print(loss.item())" in out
    assert _only(out, "AMP015") == []


def test_amp015_named_fix_reads_the_unscaled_value():
    src = _src(
        """
        s = scaler.scale(loss)
        s.backward()
        scaler.step(optimizer)
        scaler.update()
        history.append(s.item())
        """
    )
    out = _fixed(src, "AMP015")
    assert "history.append(loss.item())" in out
    assert _only(out, "AMP015") == []


def test_amp015_no_fix_when_the_value_has_other_uses_or_source_rebound():
    src = _src(
        """
        s = scaler.scale(loss)
        s.backward()
        scaler.step(optimizer)
        scaler.update()
        history.append(s.item())
        return s
        """
    )
    (d,) = _only(src, "AMP015")
    assert d.fix is None
    src = _src(
        """
        s = scaler.scale(loss)
        s.backward()
        loss = None
        history.append(s.item())
        scaler.step(optimizer)
        scaler.update()
        """
    )
    (d,) = _only(src, "AMP015")
    assert d.fix is None


# --- AMP016 -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "ctor, fixed",
    [
        ("torch.amp.GradScaler(1024.0)", "torch.amp.GradScaler(init_scale=1024.0)"),
        ("torch.GradScaler(2**16, 2.0, enabled=True)", "torch.GradScaler(init_scale=2**16, growth_factor=2.0, enabled=True)"),
    ],
)
def test_amp016_numeric_fix(ctor, fixed):
    src = f"import torch\n\nscaler = {ctor}\n"
    (d,) = _only(src, "AMP016")
    assert d.fix.applicability == "safe"
    assert "as the device, not the initial scale" in d.message
    out = _fixed(src, "AMP016")
    assert f"scaler = {fixed}\n" == out.splitlines(keepends=True)[2]
    assert _only(out, "AMP016") == []


def test_amp016_numeric_fix_conflicting_keyword():
    (d,) = _only("import torch\n\ns = torch.amp.GradScaler(1024.0, init_scale=2.0)\n", "AMP016")
    assert d.fix is None


def test_amp016_deprecated_signature_is_fine():
    src = "import torch\n\na = torch.cuda.amp.GradScaler(1024.0)\nb = torch.cpu.amp.GradScaler(2.0**16)\n"
    assert _only(src, "AMP016") == []


def test_amp016_cpu_fix_is_unsafe():
    src = LOOP.format(body="").replace('GradScaler("cuda")', "GradScaler(init_scale=8.0)").replace('"cuda", dtype', '"cpu", dtype')
    (d,) = _only(src, "AMP016")
    assert d.fix.applicability == "unsafe"
    out = _fixed(src, "AMP016")
    assert 'torch.amp.GradScaler("cpu", init_scale=8.0)' in out


# --- AMP901 / AMP902 ----------------------------------------------------------------------


def test_off_by_default():
    src = textwrap.dedent(
        """\
        import torch
        from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

        def train(model, optimizer, loader):
            model = FSDP(model)
            scaler = torch.amp.GradScaler("cuda")
            for x, y in loader:
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    loss = model(x).sum()
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
        """
    )
    from amplint.engine import lint_source

    assert {d.code for d in lint_source(src, "x.py")} & {"AMP901", "AMP902"} == set()
    assert {d.code for d in lint(src)} >= {"AMP901", "AMP902"}


def test_amp902_fix_swaps_and_imports():
    src = textwrap.dedent(
        """\
        import torch
        from torch.distributed.fsdp import FullyShardedDataParallel as FSDP

        model = FSDP(torch.nn.Linear(2, 2))
        scaler = torch.cuda.amp.GradScaler(enabled=True)
        """
    )
    out = _fixed(src, "AMP902")
    assert "from torch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler\n" in out
    assert 'scaler = ShardedGradScaler("cuda", enabled=True)' in out
    assert _only(out, "AMP902") == []


def test_amp902_no_fix_for_reordered_positionals():
    src = "import torch\nfrom torch.distributed.fsdp import FullyShardedDataParallel\n\n" \
          "m = FullyShardedDataParallel(net)\ns = torch.amp.GradScaler('cuda', 1024.0, 2.0)\n"
    (d,) = _only(src, "AMP902")
    assert d.fix is None


def test_amp902_no_fix_with_several_plain_scalers():
    # swapping one constructor would make the module look like it picks its scaler per
    # strategy, and the other finding would vanish unfixed (found by the fix-safety fuzz test)
    src = (
        "import torch\n"
        "from torch.distributed.fsdp import FullyShardedDataParallel as FSDP\n"
        "def train(model):\n"
        "    model = FSDP(model)\n"
        "    a = torch.amp.GradScaler('cuda')\n"
        "    b = torch.amp.GradScaler('cuda')\n"
        "    return a, b\n"
    )
    diags = [d for d in lint(src) if d.code == "AMP902"]
    assert [(d.location.row, d.fix) for d in diags] == [(5, None), (6, None)]
    one = src.replace("    b = torch.amp.GradScaler('cuda')\n", "")
    [d] = [d for d in lint(one) if d.code == "AMP902"]
    assert d.fix is not None
