"""AMP101-AMP106: fix output (exact text, parses, finding gone), messages, and edge cases."""

from __future__ import annotations

import ast
import textwrap

import pytest
from helpers import apply_edits, lint


def src(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def findings(source: str, code: str):
    return [d for d in lint(source, select=(code,)) if d.code == code]


def fixed(source: str, code: str, index: int = 0) -> str:
    """Apply the fix of the ``index``-th finding of ``code``; the result must parse."""
    ds = findings(source, code)
    assert ds, f"no {code} finding"
    d = ds[index]
    assert d.fix is not None, f"{code} finding without a fix: {d.message}"
    out = apply_edits(source, d.fix.edits)
    ast.parse(out)
    return out


def assert_fixed(source: str, code: str, expected: str, index: int = 0) -> None:
    out = fixed(source, code, index)
    assert out == expected
    assert not findings(out, code), f"{code} still reported after the fix:\n{out}"


def no_fix(source: str, code: str) -> None:
    ds = findings(source, code)
    assert ds, f"no {code} finding"
    assert all(d.fix is None for d in ds), [d.message for d in ds if d.fix is not None]


# --- AMP101 deprecated-amp-namespace ------------------------------------------------------


@pytest.mark.parametrize(
    "before, after",
    [
        ("torch.cuda.amp.autocast(False)", 'torch.amp.autocast("cuda", enabled=False)'),
        ("torch.cuda.amp.autocast()", 'torch.amp.autocast("cuda")'),
        ("torch.cuda.amp.autocast(enabled=use_amp)", 'torch.amp.autocast("cuda", enabled=use_amp)'),
        ("torch.cuda.amp.autocast(True, torch.bfloat16, False)",
         'torch.amp.autocast("cuda", enabled=True, dtype=torch.bfloat16, cache_enabled=False)'),
        ("torch.cuda.amp.autocast(use_amp, dtype=torch.float16)",
         'torch.amp.autocast("cuda", enabled=use_amp, dtype=torch.float16)'),
        ("torch.cpu.amp.autocast(dtype=torch.bfloat16)", 'torch.amp.autocast("cpu", dtype=torch.bfloat16)'),
        ("torch.cuda.amp.autocast_mode.autocast(False)", 'torch.amp.autocast("cuda", enabled=False)'),
        ("torch.cuda.amp.GradScaler(1024.0)", 'torch.amp.GradScaler("cuda", init_scale=1024.0)'),
        ("torch.cuda.amp.GradScaler()", 'torch.amp.GradScaler("cuda")'),
        ("torch.cuda.amp.GradScaler(2.0**16, 2.0, 0.5, 100, use_amp)",
         'torch.amp.GradScaler("cuda", init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5, '
         'growth_interval=100, enabled=use_amp)'),
        ("torch.cpu.amp.GradScaler(enabled=False)", 'torch.amp.GradScaler("cpu", enabled=False)'),
        ("torch.cuda.amp.grad_scaler.GradScaler(init_scale=8.0)", 'torch.amp.GradScaler("cuda", init_scale=8.0)'),
        ("torch.cuda.amp.autocast((a or b))", 'torch.amp.autocast("cuda", enabled=(a or b))'),
    ],
)
def test_amp101_call_fix(before, after):
    source = f"import torch\n\nx = {before}\n"
    assert_fixed(source, "AMP101", f"import torch\n\nx = {after}\n")


def test_amp101_fix_keeps_layout_and_comments():
    source = src(
        """
        import torch

        scaler = torch.cuda.amp.GradScaler(
            2.0**10,  # a small start
            growth_interval=50,
        )
        """
    )
    expected = src(
        """
        import torch

        scaler = torch.amp.GradScaler(
            "cuda", init_scale=2.0**10,  # a small start
            growth_interval=50,
        )
        """
    )
    assert_fixed(source, "AMP101", expected)


def test_amp101_torch_alias_keeps_alias():
    source = "import torch as th\n\nwith th.cuda.amp.autocast(False):\n    pass\n"
    assert_fixed(source, "AMP101", 'import torch as th\n\nwith th.amp.autocast("cuda", enabled=False):\n    pass\n')


@pytest.mark.parametrize(
    "before, after",
    [
        ("@torch.cuda.amp.custom_fwd", '@torch.amp.custom_fwd(device_type="cuda")'),
        ("@torch.cuda.amp.custom_fwd()", '@torch.amp.custom_fwd(device_type="cuda")'),
        ("@torch.cuda.amp.custom_fwd(cast_inputs=torch.float32)",
         '@torch.amp.custom_fwd(device_type="cuda", cast_inputs=torch.float32)'),
    ],
)
def test_amp101_custom_fwd_fix(before, after):
    template = src(
        """
        import torch


        class F(torch.autograd.Function):
            @staticmethod
            {dec}
            def forward(ctx, x):
                return x

            @staticmethod
            @torch.amp.custom_bwd(device_type="cuda")
            def backward(ctx, g):
                return g
        """
    )
    assert_fixed(template.format(dec=before), "AMP101", template.format(dec=after))


def test_amp101_custom_bwd_fix_and_call_form():
    source = "import torch\n\nbwd = torch.cuda.amp.custom_bwd(backward_fn)\nfwd = torch.cuda.amp.custom_fwd(forward_fn)\n"
    out = fixed(source, "AMP101", 0)
    assert out == 'import torch\n\nbwd = torch.amp.custom_bwd(backward_fn, device_type="cuda")\nfwd = torch.cuda.amp.custom_fwd(forward_fn)\n'
    out = fixed(out, "AMP101", 0)
    assert out.endswith('fwd = torch.amp.custom_fwd(forward_fn, device_type="cuda")\n')
    assert not findings(out, "AMP101")


FROM_IMPORT = src(
    """
    import torch
    from torch.cuda.amp import GradScaler, autocast


    def train(model, optimizer, loader, use_amp):
        scaler = GradScaler(enabled=use_amp)
        for x, y in loader:
            with autocast(use_amp):
                loss = model(x, y)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
    """
)


def fix_all(source: str, code: str, unsafe: bool) -> str:
    """What ``--fix`` (rounds of non-overlapping fixes, each re-linted) makes of ``source``."""
    from amplint.config import CliOverrides, build_settings
    from amplint.engine import Linter, decode
    from amplint.fixer import fix_source
    from amplint.rules import all_rules

    linter = Linter(build_settings([], CliOverrides(isolated=True, select=[code]), all_rules()))
    first = linter.check_bytes(source.encode(), "t.py", force=True)
    text, _result, _n = fix_source(linter, decode(source.encode()), "t.py", first, unsafe=unsafe)
    ast.parse(text)
    return text


def test_amp101_from_import_each_use_fixed_on_its_own():
    ds = findings(FROM_IMPORT, "AMP101")
    assert [(d.location.row, d.location.column) for d in ds] == [(2, 28), (2, 40), (6, 14), (8, 14)]
    # the import line: no fix while the names are used
    assert ds[0].fix is None and ds[1].fix is None
    one = fixed(FROM_IMPORT, "AMP101", 2)
    assert one == FROM_IMPORT.replace("GradScaler(enabled=use_amp)", 'torch.amp.GradScaler("cuda", enabled=use_amp)')
    two = fixed(FROM_IMPORT, "AMP101", 3)
    assert two == FROM_IMPORT.replace("with autocast(use_amp):", 'with torch.amp.autocast("cuda", enabled=use_amp):')
    # each fix removes its own finding and leaves the others alone
    assert len(findings(one, "AMP101")) == len(findings(two, "AMP101")) == 3


def test_amp101_from_import_fixed_in_rounds():
    safe = fix_all(FROM_IMPORT, "AMP101", unsafe=False)
    assert safe == FROM_IMPORT.replace("GradScaler(enabled=use_amp)", 'torch.amp.GradScaler("cuda", enabled=use_amp)').replace(
        "with autocast(use_amp):", 'with torch.amp.autocast("cuda", enabled=use_amp):')
    # the import, now unused, is removed only as an unsafe fix (another module may import it from here)
    assert [d.fix.applicability for d in findings(safe, "AMP101")] == ["unsafe", "unsafe"]
    everything = fix_all(FROM_IMPORT, "AMP101", unsafe=True)
    assert everything == safe.replace("from torch.cuda.amp import GradScaler, autocast\n", "")
    assert not findings(everything, "AMP101")


def test_amp101_from_import_adds_import_torch():
    source = "from torch.cuda.amp.grad_scaler import GradScaler as GS\n\ns = GS(128.0)\n"
    out = fixed(source, "AMP101", 1)
    assert out == 'import torch\nfrom torch.cuda.amp.grad_scaler import GradScaler as GS\n\ns = torch.amp.GradScaler("cuda", init_scale=128.0)\n'
    assert fix_all(source, "AMP101", unsafe=True) == 'import torch\n\ns = torch.amp.GradScaler("cuda", init_scale=128.0)\n'


def test_amp101_from_import_decorators():
    source = src(
        """
        import torch
        from torch.cuda.amp import custom_bwd, custom_fwd


        class F(torch.autograd.Function):
            @staticmethod
            @custom_fwd
            def forward(ctx, x):
                return x

            @staticmethod
            @custom_bwd
            def backward(ctx, g):
                return g
        """
    )
    out = fix_all(source, "AMP101", unsafe=True)
    assert "torch.cuda.amp" not in out
    assert '    @torch.amp.custom_fwd(device_type="cuda")\n' in out and '    @torch.amp.custom_bwd(device_type="cuda")\n' in out
    assert not findings(out, "AMP101")


def test_amp101_import_removal_keeps_other_names():
    source = "import torch\nfrom torch.cuda.amp import GradScaler, autocast\n\nwith autocast():\n    pass\n"
    ds = findings(source, "AMP101")
    assert ds[0].fix is not None and ds[0].fix.applicability == "unsafe"
    assert apply_edits(source, ds[0].fix.edits) == "import torch\nfrom torch.cuda.amp import autocast\n\nwith autocast():\n    pass\n"


@pytest.mark.parametrize(
    "body",
    [
        "def f(*args):\n    return autocast(*args)\n",  # star arguments
        "ctx = autocast\n",  # used as a value
        "def f(autocast=None):\n    return autocast\n",  # the name means something else somewhere
    ],
)
def test_amp101_from_import_no_fix(body):
    no_fix(f"import torch\nfrom torch.cuda.amp import autocast\n\n{body}", "AMP101")


def test_amp101_exported_import_is_not_removed():
    source = "import torch\nfrom torch.cuda.amp import autocast\n\n__all__ = ['autocast']\n"
    (d,) = findings(source, "AMP101")
    assert d.fix is None


def test_amp101_module_alias_fix():
    with_torch = "import torch\nimport torch.cuda.amp as amp\n\nwith amp.autocast(False):\n    pass\n"
    assert_fixed(with_torch, "AMP101", 'import torch\nimport torch.cuda.amp as amp\n\nwith torch.amp.autocast("cuda", enabled=False):\n    pass\n')
    from_cuda = "import torch\nfrom torch.cuda import amp\n\ns = amp.GradScaler(4.0)\n"
    assert_fixed(from_cuda, "AMP101", 'import torch\nfrom torch.cuda import amp\n\ns = torch.amp.GradScaler("cuda", init_scale=4.0)\n')
    # ``torch`` is bound nowhere: the fix imports it right before the alias
    assert_fixed("import torch.cuda.amp as amp\n\nwith amp.autocast():\n    pass\n", "AMP101",
                 'import torch\nimport torch.cuda.amp as amp\n\nwith torch.amp.autocast("cuda"):\n    pass\n')
    # ``torch`` means something else here: no fix
    no_fix("from torch.cuda import amp\n\ntorch = None\nwith amp.autocast():\n    pass\n", "AMP101")
    no_fix("import torch\nfrom torch.cuda import amp\n\ndef f(torch):\n    with amp.autocast():\n        pass\n", "AMP101")


@pytest.mark.parametrize(
    "line",
    [
        "ok = isinstance(s, torch.cuda.amp.GradScaler)",
        "factory = torch.cuda.amp.autocast",
        "class S(torch.cuda.amp.GradScaler):\n    pass",
        "ctx = torch.cuda.amp.autocast(*flags)",
        "ctx = torch.cuda.amp.autocast(**flags)",
        'ctx = torch.cuda.amp.autocast("cuda")',  # broken already (AMP102): no rewrite
        "ctx = torch.cpu.amp.autocast(torch.bfloat16)",
        "ctx = torch.cuda.amp.autocast(a, b, c, d)",
        "s = torch.cuda.amp.GradScaler(device='cuda')",
        "f = torch.cuda.amp.custom_bwd()",
    ],
)
def test_amp101_no_unsafe_fix(line):
    no_fix(f"import torch\n\n{line}\n", "AMP101")


def test_amp101_reports_each_reference_once():
    source = src(
        """
        import torch
        from torch.cuda.amp import autocast

        a = torch.cuda.amp.GradScaler()
        with autocast():
            pass
        with autocast():
            pass
        """
    )
    ds = findings(source, "AMP101")
    assert [d.location.row for d in ds] == [2, 4, 5, 7]
    assert ds[1].message == '`torch.cuda.amp.GradScaler` is deprecated: use `torch.amp.GradScaler("cuda", ...)`'


def test_amp101_not_for_the_module_or_other_names():
    source = src(
        """
        import torch
        from torch.cuda import amp
        from torch.cuda.amp.grad_scaler import OptState

        ok = torch.cuda.amp.common.amp_definitely_not_available()
        """
    )
    assert findings(source, "AMP101") == []


def test_amp101_fixed_code_runs_like_the_old_code():
    torch = pytest.importorskip("torch")
    import warnings

    source = src(
        """
        import torch

        scaler = torch.cpu.amp.GradScaler(1024.0, 3.0, 0.25, 7, True)
        region = torch.cpu.amp.autocast(True, torch.float16, False)
        """
    )
    out = source
    while True:
        ds = [d for d in findings(out, "AMP101") if d.fix is not None]
        if not ds:
            break
        out = apply_edits(out, ds[0].fix.edits)
    assert "torch.cpu.amp" not in out
    old, new = {}, {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(source, "old", "exec"), old)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        exec(compile(out, "new", "exec"), new)
    for ns in (old, new):
        s = ns["scaler"]
        assert (s._init_scale, s._growth_factor, s._backoff_factor, s._growth_interval, s._enabled) == (1024.0, 3.0, 0.25, 7, True)
        r = ns["region"]
        assert (r.device, r.fast_dtype, r._enabled, r._cache_enabled) == ("cpu", torch.float16, True, False)


# --- AMP102 autocast-bad-arguments ------------------------------------------------------


@pytest.mark.parametrize(
    "before, after",
    [
        ('torch.autocast(torch.device("cuda"))', 'torch.autocast("cuda")'),
        ('torch.autocast(torch.device("cuda", 0), dtype=torch.float16)', 'torch.autocast("cuda", dtype=torch.float16)'),
        ('torch.amp.autocast(device_type=torch.device("cuda:1"))', 'torch.amp.autocast(device_type="cuda")'),
        ('torch.autocast("cuda", False)', 'torch.autocast("cuda", enabled=False)'),
        ('torch.autocast(device, True)', 'torch.autocast(device, enabled=True)'),
    ],
)
def test_amp102_fix(before, after):
    assert_fixed(f"import torch\n\nctx = {before}\n", "AMP102", f"import torch\n\nctx = {after}\n")


def test_amp102_device_name_fix():
    source = 'import torch\n\ndevice = torch.device("cuda")\nwith torch.autocast(device):\n    pass\n'
    assert_fixed(source, "AMP102", 'import torch\n\ndevice = torch.device("cuda")\nwith torch.autocast(device.type):\n    pass\n')


@pytest.mark.parametrize(
    "line, message",
    [
        ("torch.autocast(True)", "`True` is taken as the device type, which must be a string like \"cuda\""),
        ('torch.autocast("gpu")', '`"gpu"` is not a device type: use "cuda", "cpu", "xpu", ...'),
        ("torch.autocast()", '`torch.autocast()` needs a device type: `torch.autocast("cuda", ...)`'),
        ('torch.autocast("cuda", dtype=torch.float64)', "`torch.float64` is not an autocast dtype"),
        ("torch.amp.custom_fwd(cast_inputs=torch.float32)", "`torch.amp.custom_fwd` needs `device_type`"),
        ('torch.cuda.amp.autocast("cuda")', "The first positional argument of `torch.cuda.amp.autocast` is `enabled`"),
    ],
)
def test_amp102_messages(line, message):
    ds = findings(f"import torch\n\nctx = {line}\n", "AMP102")
    assert len(ds) == 1 and ds[0].message.startswith(message), ds[0].message
    assert ds[0].fix is None


@pytest.mark.parametrize(
    "line",
    [
        "torch.autocast(device.type)",
        "torch.autocast(device_type=dev)",
        "torch.autocast(self.device)",
        'torch.autocast("cuda:0")',
        'torch.autocast("npu", dtype=torch.float16)',
        'torch.autocast("cuda", None)',
        'torch.autocast("cuda", torch.float16, False)',
        "torch.autocast(*args)",
        'torch.amp.custom_fwd(device_type="cuda")',
        "torch.amp.custom_fwd(**kw)",
        "torch.cuda.amp.autocast(True)",
        "torch.cuda.amp.autocast(enabled)",
    ],
)
def test_amp102_no_false_positive(line):
    assert findings(f"import torch\n\nctx = {line}\n", "AMP102") == []


# --- AMP103 bce-under-autocast ------------------------------------------------------------

BCE_TEMPLATE = src(
    """
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    with torch.autocast("cuda", dtype=torch.float16):
        loss = {call}
    """
)


@pytest.mark.parametrize(
    "before, after",
    [
        ("F.binary_cross_entropy(torch.sigmoid(z), y)", "F.binary_cross_entropy_with_logits(z, y)"),
        ('F.binary_cross_entropy(z.sigmoid(), y, reduction="sum")', 'F.binary_cross_entropy_with_logits(z, y, reduction="sum")'),
        ("torch.nn.functional.binary_cross_entropy(input=torch.sigmoid(a + b), target=y)",
         "torch.nn.functional.binary_cross_entropy_with_logits(input=a + b, target=y)"),
        ('nn.BCELoss(reduction="none")(torch.sigmoid(z), y)', 'nn.BCEWithLogitsLoss(reduction="none")(z, y)'),
    ],
)
def test_amp103_fix(before, after):
    assert_fixed(BCE_TEMPLATE.format(call=before), "AMP103", BCE_TEMPLATE.format(call=after))


@pytest.mark.parametrize(
    "call",
    [
        "F.binary_cross_entropy(p, y)",  # probabilities from elsewhere: no logits at hand
        "F.binary_cross_entropy(torch.sigmoid(z, out=buf), y)",
        "torch.binary_cross_entropy(torch.sigmoid(z), y)",  # different positional order
        "nn.BCELoss()(p, y)",
    ],
)
def test_amp103_no_fix(call):
    no_fix(BCE_TEMPLATE.format(call=call), "AMP103")


def test_amp103_message_names_the_callee():
    ds = findings(BCE_TEMPLATE.format(call="F.binary_cross_entropy(p, y)"), "AMP103")
    assert ds[0].message == (
        "`F.binary_cross_entropy` under CUDA autocast raises RuntimeError: use "
        "`F.binary_cross_entropy_with_logits` on the logits"
    )


def test_amp103_logits_fix_computes_the_same_loss():
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    z = torch.linspace(-6, 6, 25)
    y = (torch.arange(25) % 3 == 0).float()
    assert torch.allclose(F.binary_cross_entropy(torch.sigmoid(z), y), F.binary_cross_entropy_with_logits(z, y), atol=1e-5)


# --- AMP104 custom-function-autocast-mismatch -------------------------------------------------

FN_TEMPLATE = src(
    """
    import torch


    class Fn(torch.autograd.Function):
        @staticmethod
    {fwd}    def forward(ctx, x):
            return x * 2

        @staticmethod
    {bwd}    def backward(ctx, g):
            return g * 2
    """
)


@pytest.mark.parametrize(
    "fwd, bwd, fixed_fwd, fixed_bwd",
    [
        ('@torch.amp.custom_fwd(device_type="cuda")', "", None, '@torch.amp.custom_bwd(device_type="cuda")'),
        ('@torch.amp.custom_fwd(device_type=DEV, cast_inputs=torch.float32)', "", None, "@torch.amp.custom_bwd(device_type=DEV)"),
        ("", '@torch.amp.custom_bwd(device_type="cpu")', '@torch.amp.custom_fwd(device_type="cpu")', None),
        ("@torch.cuda.amp.custom_fwd", "", None, '@torch.amp.custom_bwd(device_type="cuda")'),
    ],
)
def test_amp104_fix(fwd, bwd, fixed_fwd, fixed_bwd):
    def dec(text):
        return f"    {text}\n" if text else ""

    source = FN_TEMPLATE.format(fwd=dec(fwd), bwd=dec(bwd))
    expected = FN_TEMPLATE.format(fwd=dec(fwd) + dec(fixed_fwd or ""), bwd=dec(bwd) + dec(fixed_bwd or ""))
    assert_fixed(source, "AMP104", expected)


def test_amp104_message_and_location():
    source = FN_TEMPLATE.format(fwd='    @torch.amp.custom_fwd(device_type="cuda")\n', bwd="")
    (d,) = findings(source, "AMP104")
    assert d.message == "`Fn.backward` lacks `@custom_bwd` while `forward` is decorated with `@custom_fwd`"
    assert (d.location.row, d.location.column) == (11, 9)  # the undecorated method's ``def`` line
    assert [r.location.row for r in d.related] == [4, 7]  # the class, and the decorated forward


def test_amp104_inherited_undecorated_method_is_reported_on_the_class():
    source = src(
        """
        import torch


        class Base(torch.autograd.Function):
            @staticmethod
            def backward(ctx, g):
                return g


        class Identity(Base):
            @staticmethod
            @torch.amp.custom_fwd(device_type="cuda")
            def forward(ctx, x):
                return x.clone()
        """
    )
    (d,) = findings(source, "AMP104")
    assert d.message == "`Identity.backward` lacks `@custom_bwd` while `forward` is decorated with `@custom_fwd`"
    assert d.location.row == 10  # ``class Identity``: Base's backward may be right for its other subclasses


def test_amp104_no_fix_without_device_type_or_torch():
    no_fix(FN_TEMPLATE.format(fwd="    @torch.amp.custom_fwd\n", bwd=""), "AMP104")
    source = src(
        """
        from torch.amp import custom_fwd
        from torch.autograd import Function


        class Fn(Function):
            @staticmethod
            @custom_fwd(device_type="cuda")
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * 2
        """
    )
    no_fix(source, "AMP104")  # custom_bwd is not imported, and neither is torch


def test_amp104_from_import_without_partner_uses_torch_amp():
    source = "from torch.amp import custom_fwd\n" + FN_TEMPLATE.format(fwd='    @custom_fwd(device_type="cuda")\n', bwd="")
    expected = "from torch.amp import custom_fwd\n" + FN_TEMPLATE.format(
        fwd='    @custom_fwd(device_type="cuda")\n', bwd='    @torch.amp.custom_bwd(device_type="cuda")\n')
    assert_fixed(source, "AMP104", expected)


def test_amp104_fix_with_from_import():
    source = "from torch.amp import custom_bwd, custom_fwd\n" + FN_TEMPLATE.format(fwd="", bwd='    @custom_bwd(device_type="cuda")\n')
    expected = "from torch.amp import custom_bwd, custom_fwd\n" + FN_TEMPLATE.format(
        fwd='    @custom_fwd(device_type="cuda")\n', bwd='    @custom_bwd(device_type="cuda")\n')
    assert_fixed(source, "AMP104", expected)


# --- AMP105 backward-inside-autocast ------------------------------------------------------


def test_amp105_fix_moves_the_tail_out():
    source = src(
        """
        for x, y in loader:
            with torch.autocast("cuda", dtype=torch.float16):
                loss = criterion(model(x), y)
                scaler.scale(loss).backward()  # scaled
                scaler.step(optimizer)
                scaler.update()
            log(loss)
        """
    )
    expected = src(
        """
        for x, y in loader:
            with torch.autocast("cuda", dtype=torch.float16):
                loss = criterion(model(x), y)
            scaler.scale(loss).backward()  # scaled
            scaler.step(optimizer)
            scaler.update()
            log(loss)
        """
    )
    assert_fixed("import torch\n" + source, "AMP105", "import torch\n" + expected)


def test_amp105_fix_two_space_indent():
    source = 'import torch\n\ndef f(m, x):\n  with torch.autocast("cpu"):\n    loss = m(x)\n    loss.backward()\n'
    expected = 'import torch\n\ndef f(m, x):\n  with torch.autocast("cpu"):\n    loss = m(x)\n  loss.backward()\n'
    assert_fixed(source, "AMP105", expected)


@pytest.mark.parametrize(
    "body",
    [
        "    loss = m(x)\n    loss.backward()\n    if ok:\n        step()\n",  # a compound statement follows
        "    loss.backward()\n",  # nothing would stay in the block
        "    loss = m(x)\n    # backward here on purpose\n    loss.backward()\n",  # a comment above
        "    loss = m(x)\n    if ok:\n        loss.backward()\n",  # nested
    ],
)
def test_amp105_no_fix(body):
    no_fix(f'import torch\n\nwith torch.autocast("cuda"):\n{body}', "AMP105")


def test_amp105_no_fix_with_two_items():
    no_fix('import torch\n\nwith torch.autocast("cuda"), ctx():\n    loss = m(x)\n    loss.backward()\n', "AMP105")


def test_amp105_message():
    (d,) = findings('import torch\n\nwith torch.autocast("cuda"):\n    loss = m(x)\n    loss.backward()\n', "AMP105")
    assert d.message == "`loss.backward()` runs inside the autocast region: exit autocast before the backward pass"


# --- AMP106 fp16-backward-without-scaler ----------------------------------------------------


def test_amp106_message_and_no_fix():
    source = 'import torch\n\nwith torch.autocast("cuda"):\n    loss = m(x)\nloss.backward()\n'
    (d,) = findings(source, "AMP106")
    assert d.message == "`loss.backward()` back-propagates a float16 autocast loss without a GradScaler: small gradients underflow to zero"
    assert d.fix is None and (d.location.row, d.location.column) == (5, 1)


def test_amp106_deprecated_cuda_autocast_is_float16():
    source = "import torch\n\nwith torch.cuda.amp.autocast():\n    loss = m(x)\nloss.backward()\n"
    assert [d.location.row for d in findings(source, "AMP106")] == [5]
    source_cpu = "import torch\n\nwith torch.cpu.amp.autocast():\n    loss = m(x)\nloss.backward()\n"
    assert findings(source_cpu, "AMP106") == []


@pytest.mark.parametrize(
    "extra",
    [
        "scaler = torch.amp.GradScaler('cuda', enabled=False)\n",
        "def step(loss, loss_scaler):\n    loss_scaler(loss)\n",
        "from timm.utils import NativeScaler\n",
    ],
)
def test_amp106_any_scaler_in_the_module_silences_it(extra):
    source = 'import torch\n' + extra + '\nwith torch.autocast("cuda"):\n    loss = m(x)\nloss.backward()\n'
    assert findings(source, "AMP106") == []
