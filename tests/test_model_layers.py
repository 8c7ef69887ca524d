"""Unit tests of the model's layers: syntax (bindings, blocks, arms), scopes, values, scaler
verdicts. End-to-end behaviour is in the rule and case tests; these pin the facts themselves."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from amplint.model import AmpModel


def _model(src: str, **kw) -> AmpModel:
    return AmpModel(cst.parse_module(textwrap.dedent(src)), **kw)


def _func(m: AmpModel, qualname: str):
    return next(f for f in m.functions if f.qualname == qualname)


# --- syntax: bindings -------------------------------------------------------------------------


def test_bindings_of_every_kind():
    m = _model(
        """\
        import torch.nn as nn
        from . import utils
        from ..pkg.mod import thing as t
        class T:
            field: int = 3
            def f(self, a, *args, b: "GradScaler" = None, **kw):
                self.s = 1
                d = {}
                d["k"] = 2
                x, (y, *z) = g()
                p, q = 1, 2
                for i, (u, v) in enumerate(w):
                    pass
                with open(a) as fh:
                    pass
                try:
                    pass
                except ValueError as err:
                    pass
                if (n := 3):
                    pass
                k += 1
                del fh
        """
    )
    got = [(b.kind, b.name, b.unpack, b.key) for b in m.scopes.all]
    for want in [
        ("import", "nn", (), None), ("import", "utils", (), None), ("import", "t", (), None),
        ("class", "T", (), None), ("ann", "field", (), None), ("def", "f", (), None),
        ("param", "self", (), None), ("param", "args", (), None), ("param", "b", (), None), ("param", "kw", (), None),
        ("assign", "self.s", (), None), ("item", "d", (), "k"),
        ("assign", "x", (0,), None), ("assign", "y", (1, 0), None), ("assign", "z", (1, -1), None),
        ("assign", "p", (), None), ("assign", "q", (), None),
        ("for", "i", (0,), None), ("for", "u", (1, 0), None), ("for", "v", (1, 1), None),
        ("with", "fh", (), None), ("except", "err", (), None), ("walrus", "n", (), None),
        ("aug", "k", (), None), ("del", "fh", (), None),
    ]:
        assert want in got, want
    quals = {b.name: b.qual for b in m.scopes.all if b.kind == "import"}
    assert quals == {"nn": "torch.nn", "utils": ".utils", "t": "..pkg.mod.thing"}
    # literal tuples give each target its own value
    q = next(b for b in m.scopes.all if b.name == "q")
    assert isinstance(q.value, cst.Integer) and q.value.value == "2"


def test_blocks_and_exclusive_arms():
    m = _model(
        """\
        def f(a):
            if a:
                x()
            elif b:
                y()
            else:
                z()
            w = p() if a else r()
        """
    )
    f = _func(m, "f")
    calls = {c.text: c for c in f.calls}
    assert [i for _o, _t, i in calls["x"].arms] == [0]
    assert [i for _o, _t, i in calls["z"].arms] == [1, 1]
    assert [i for _o, _t, i in calls["r"].arms] == [1]
    stmts, index, owner = m.blocks[calls["x"].stmt]
    assert index == 0 and isinstance(owner, cst.If)


# --- scopes ------------------------------------------------------------------------------------


def test_scope_lookup_follows_python_rules():
    m = _model(
        """\
        scaler = make()
        class C:
            scaler = 1          # a class attribute, not visible in methods
            def m(self):
                return scaler   # the module's
        def outer():
            scaler = other()
            def inner():
                return scaler   # the enclosing function's
            def glob():
                global scaler
                return scaler   # the module's
        """
    )
    top = m.top
    assert [b.func for b in m.scopes.lookup(_func(m, "C.m"), "scaler")] == [top]
    assert [b.func for b in m.scopes.lookup(_func(m, "outer.inner"), "scaler")] == [_func(m, "outer")]
    assert [b.func for b in m.scopes.lookup(_func(m, "outer.glob"), "scaler")] == [top]


def test_self_attributes_across_methods_and_bases():
    m = _model(
        """\
        class Base:
            def __init__(self):
                self.scaler = make()
        class Child(Base):
            opt: "Optimizer"
            def setup(self):
                self.scaler = other()
        """
    )
    child = next(c for c in m.classes if c.name == "Child")
    assert [b.func.qualname for b in m.scopes.attr(child, "scaler")] == ["Child.setup", "Base.__init__"]
    assert [b.kind for b in m.scopes.attr(child, "opt")] == ["ann"]
    assert [c.name for c in m.scopes.mro(child)] == ["Child", "Base"]


# --- values ------------------------------------------------------------------------------------


def _kinds(m, qualname, expr_src):
    f = _func(m, qualname)
    node = next(c.node for c in f.calls if m.code_for(c.node) == expr_src).args[0].value
    return {v.kind for v in m.values.of(f, node)}


VALUES = """\
import functools
import torch
from torch.amp import GradScaler
from sklearn.preprocessing import StandardScaler

def factory():
    return GradScaler("cuda")

class Trainer:
    def __init__(self, model):
        self.optimizers = {"g": torch.optim.Adam(model.g.parameters()), "d": torch.optim.SGD(model.d.parameters())}
        self.scaler = factory()
        self.device = torch.device("cuda")

    @property
    def amp_scaler(self):
        return self.scaler

    def f(self, names, pairs):
        for name in names:
            opt = self.optimizers[name]
            use(opt)
        for o, s in [(self.optimizers["g"], self.scaler)]:
            use(s)
        use(getattr(self, "scaler", None))
        use(self.amp_scaler)
        use(self.device)
        use(StandardScaler())
        use(self.optimizers["d"])
        use(torch.float16)
        for k, v in self.optimizers.items():
            use(v)
"""


@pytest.mark.parametrize(
    "expr, kinds",
    [
        ("use(opt)", {"optimizer"}),
        ("use(s)", {"scaler"}),
        ('use(getattr(self, "scaler", None))', {"scaler", "literal"}),
        ("use(self.amp_scaler)", {"scaler"}),
        ("use(self.device)", {"device"}),
        ("use(StandardScaler())", {"other"}),
        ('use(self.optimizers["d"])', {"optimizer"}),
        ("use(torch.float16)", {"dtype"}),
        ("use(v)", {"optimizer"}),
    ],
)
def test_values(expr, kinds):
    m = _model(VALUES)
    assert _kinds(m, "Trainer.f", expr) == kinds


def test_value_of_device_and_optimizer_params():
    m = _model(VALUES)
    f = _func(m, "Trainer.f")
    node = next(c.node for c in f.calls if m.code_for(c.node) == "use(self.device)").args[0].value
    (v,) = m.values.of(f, node)
    assert v.data == "cuda"
    node = next(c.node for c in f.calls if m.code_for(c.node) == 'use(self.optimizers["d"])').args[0].value
    (v,) = m.values.of(f, node)
    assert m.code_for(v.data) == "model.d.parameters()"


DTYPE_TESTS = """
import torch

def f(cfg, other):
    bf = torch.bfloat16 if cfg.amp else None
    half = torch.half if cfg.amp else None
    only = torch.float16
    use(bf is torch.float16, bf is not torch.float16, bf == torch.bfloat16, bf is None, half is torch.float16,
        half != torch.float16, only is torch.float16, only == torch.bfloat16, other is torch.float16,
        cfg.dtype == torch.float16, bf is torch.float32)
"""


def test_dtype_tests_decided_by_the_values_a_name_may_hold():
    m = _model(DTYPE_TESTS)
    f = _func(m, "f")
    call = next(c for c in f.calls if c.text == "use")
    got = [m.values.dtype_test(f, a.value) for a in call.node.args]
    assert got == [False, True, None, None, None, None, True, False, None, None, None]


# --- scaler verdicts -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "src, func, key, verdict",
    [
        # an annotation with another class is never a GradScaler, whatever its methods are called
        ("def f(activation_scaler: ActivationScaler, x):\n    return activation_scaler.scale(x).backward()\n",
         "f", "activation_scaler", False),
        ("from typing import Optional\nfrom torch.amp import GradScaler\n"
         "def f(s: Optional[GradScaler] = None):\n    pass\n", "f", "s", True),
        ("def f(s: 'torch.amp.GradScaler | None'):\n    pass\n", "f", "s", True),
        ("from sklearn.preprocessing import StandardScaler\n"
         "def f(x):\n    scaler = StandardScaler()\n    scaler.scale(x)\n    scaler.step(x)\n", "f", "scaler", False),
        ("def f(grad_scaler, opt):\n    grad_scaler.step(opt)\n", "f", "grad_scaler", True),
        ("import torch\ndef make():\n    return torch.amp.GradScaler('cuda')\n"
         "def f():\n    s = make()\n", "f", "s", True),
        ("import torch\nclass T:\n    def __init__(self):\n        self.s = torch.GradScaler() if amp else None\n"
         "    def g(self):\n        pass\n", "T.g", "self.s", True),
        ("import torch\nfrom dataclasses import dataclass\n@dataclass\nclass State:\n    scaler: torch.amp.GradScaler\n"
         "    def g(self):\n        pass\n", "State.g", "self.scaler", True),
    ],
)
def test_scaler_verdicts(src, func, key, verdict):
    m = _model(src)
    assert m.is_scaler(_func(m, func), key) is verdict


def test_configured_scaler_names():
    m = _model("def f(loss_scaler, opt):\n    loss_scaler.step(opt)\n", scaler_names=("loss_scaler",))
    assert m.is_scaler(_func(m, "f"), "loss_scaler")


# --- identifiers as CPython reads them (NFKC) ---------------------------------------------------

NFKC_LOOP = '''import torch


def train(model, opt, loader):
    scaler = torch.amp.GradScaler("cuda")
    for x in loader:
        scaler.scale(model(x).sum()).backward()
        scaler.step(opt)
        scaler.{update}()
'''


def test_fullwidth_identifiers_are_the_names_python_reads():
    """``scaler.ｕｐｄａｔｅ()`` is ``scaler.update()`` to CPython (PEP 3131 folds identifiers
    with NFKC): no AMP001; without the update the finding stays, at the same place."""
    from amplint.engine import lint_source

    assert [d.code for d in lint_source(NFKC_LOOP.format(update="ｕｐｄａｔｅ").encode(), "t.py")] == []
    missing = NFKC_LOOP.format(update="ｇｅｔ_scale")
    assert [(d.code, d.location.row) for d in lint_source(missing.encode(), "t.py")] == [("AMP001", 8)]


def test_fold_identifiers_keeps_every_position_and_leaves_strings_alone():
    from amplint.literals import fold_identifiers

    text = 's = "ｕｐｄａｔｅ"  # ｕｐｄａｔｅ\nｓｃａｌｅｒ.ｕｐｄａｔｅ()\n'
    folded, rows = fold_identifiers(text)
    assert folded == 's = "ｕｐｄａｔｅ"  # ｕｐｄａｔｅ\nscaler.update()\n'
    assert rows == [(2, 2)] and len(folded) == len(text)
    assert fold_identifiers("plain = 1\n") == ("plain = 1\n", [])


def test_static_callees_follow_constructors_and_local_instances():
    m = _model("""
        import torch

        class Base:
            def learn(self, loss):
                self.scaler.step(self.opt)

        class Learner(Base):
            def __init__(self, opt):
                self.opt = opt
                self.scaler = torch.amp.GradScaler("cuda")

        def drive(opt, loader):
            learner = Learner(opt)
            for b in loader:
                learner.learn(b)

        def shadowed(Learner, loader):
            learner = Learner(None)
            learner.learn(1)

        def rebound(opt, flag):
            learner = Learner(opt)
            if flag:
                learner = object()
            learner.learn(1)
    """)
    by = {f.qualname: f for f in m.functions}
    names = {f: {c.qualname for c in cs} for f, cs in m.static_callees.items()}
    assert names[by["drive"]] == {"Learner.__init__", "Base.learn"}
    assert names[by["shadowed"]] == set()  # a parameter hides the class
    assert names[by["rebound"]] == {"Learner.__init__"}  # not every binding is a Learner
    relevant = {f.qualname for f in m.relevant_functions()}
    assert {"drive", "Base.learn", "Learner.__init__"} <= relevant and "shadowed" not in relevant


def test_relevant_functions_by_scaler_method_signature():
    """A call whose arguments no GradScaler method takes is no protocol event: a generator that
    updates a kwargs dict is not relevant (and so neither are its importers' flows)."""
    m = _model("""
        def inputs(layout):
            for args, kwargs in make():
                kwargs.update(layout=layout)
                yield args, kwargs

        def finish(s, opt):
            s.step(opt)
            s.update()

        def rescale(s, new):
            s.update(new_scale=new)
    """)
    relevant = {f.qualname for f in m.relevant_functions()}
    assert {"finish", "rescale"} <= relevant and "inputs" not in relevant


@pytest.mark.parametrize("text,switch", [
    ("use_amp", True), ("self.amp", True), ("args.amp_enabled", True), ("useAmp", True), ("cfg.USE_AMP", True),
    ("AMP", True), ("notargs.amp", True), ("self.half_precision", True), ("useHalf", True), ("FLAGS.fp16", True),
    ("scalerisNone", True), ("self.mixed_precision", True), ("torch.cuda.is_available()", True),
    # ``amp`` and ``half`` inside other words are not switches (each kept atom splits the paths)
    ("num_test_examples", False), ("'num_examples'inargs", False), ("FLAGS.clamp_outputs", False),
    ("SAMPLE_RATE>16000", False), ("FLAGS.timestamp_logs", False), ("on_behalf", False), ("ampere", False),
    ("FLAGS.torch", False), ("rank==0", False),
])
def test_amp_switches_are_read_from_whole_words(text, switch):
    from amplint.model.flow.atoms import amp_switch

    assert amp_switch(text) is switch


def test_a_local_helper_object_update_is_no_scaler_event():
    # ``metrics.update(stats)`` on a local that never holds a scaler leaves a validation helper
    # transparent (skipped, not interpreted once per caller state); an ``update`` on a
    # parameter, an attribute or a name that holds a scaler still counts
    m = _model(textwrap.dedent("""
        import torch
        scaler = torch.amp.GradScaler("cuda")
        def validate(model, loader):
            metrics = Metrics()
            for x in loader:
                metrics.update(model(x))
            return metrics
        def tick(s):
            s.update()
        def tock(self):
            self.meter.update(1)
        def train(model, opt, loader):
            for x in loader:
                scaler.scale(model(x)).backward()
                scaler.step(opt)
                validate(model, loader)
                scaler.update()
    """))
    flow = m.flow
    assert flow.transparent(_func(m, "validate"))
    assert not flow.transparent(_func(m, "tick"))
    assert not flow.transparent(_func(m, "tock"))
    assert not flow.transparent(_func(m, "train"))
