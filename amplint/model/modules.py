"""Modules and their parameters (read by AMP014): conversions to float16 (``.half()``,
``.to(torch.float16)``), what a module name refers to through a conversion chain
(``model = Net().cuda().half()``), which optimizers hold which modules' parameters, and whether a
converted module is one a GradScaler trains (not a frozen teacher, an EMA copy, an inference
model evaluated only)."""

from __future__ import annotations

import re

import libcst as cst

from .. import torch_api as T
from .names import dotted_text
from .scopes import owner_class
from .syntax import expr_key
from .usage import calls_in, facts, guarded

_CHAIN = frozenset({"cuda", "to", "cpu", "train", "half", "requires_grad_", "float", "xpu", "type"})
#: methods that move a module without changing its dtype (``.to(device)``)
_MOVES = frozenset({"cuda", "to", "cpu", "train", "requires_grad_", "xpu"})
_SETUP_NAMES = ("__init__", "setup", "_setup", "build", "_build", "configure", "prepare", "_prepare")
_NOT_TRAINED = ("teacher", "ema", "frozen", "target_net", "reference", "ref_model")


def fp16_conversions_of_trained_modules(model) -> list:
    """``(conversion site, module keys, scaler constructor nodes)`` for float16 conversions of
    modules a GradScaler steps; the constructors (of this module, none for a builder whose
    importers train the model) are the cause a fix of the scaler's type also removes."""
    uf = facts(model)
    steps = uf.calls("step")
    if any(c.is_sharded for c in uf.ctors):
        return []
    if not steps:
        # a builder module (``build_model(cfg)`` beside ``build_scaler(cfg)``): the importers train
        return [(site, keys, ()) for site, keys in _built_for_importers(model, uf)]
    if uf.ctors and all(c.enabled is False for c in uf.ctors):
        return []
    optimizers = _optimizers(model)
    stepped = _stepped(model, steps)
    out = []
    for site in model.calls:
        if site.in_lambda or not _is_fp16_conversion(model, site) or _undone(model, site):
            continue
        keys = _module_keys(model, site)
        if not keys or _in_eval(site) or _guard_excuses(model, site, uf) or any(_frozen(model, k) for k in keys):
            continue
        trained = _trained(model, site, keys, optimizers, stepped, steps)
        # ``m.eval()`` with no ``m.train()`` marks a frozen teacher, unless the scaler's
        # optimizer is known to hold ``m``'s parameters (validation after training)
        if not trained or (trained != "held" and any(_only_evaluated(model, k) for k in keys)):
            continue
        out.append((site, keys, tuple(c.site.node for c in uf.ctors if c.enabled is not False)))
    return out


_INFERENCE_WORDS = re.compile(r"eval|infer|export|test|predict|bench|deploy|onnx|trt|tensorrt|quant|serve", re.I)


def _guard_excuses(model, site, uf) -> bool:
    """A conversion under a condition is left alone when the condition may also decide the
    scaler (an ``enabled=`` that is not a literal, unless it is the very flag of the ``if``),
    when it is not an ``if`` (a ``try`` fallback, a ``while``), or when the condition reads like
    inference (``if args.export_fp16:``). Under a plain flag (``if args.half: model =
    model.half()``) the model a GradScaler steps is fp16 whenever the flag is on: the first
    ``step`` raises."""
    if not guarded(site.func, site.stmt):
        return False
    if _constant_guard(model, site):
        return False  # ``if CFG.half_weights:`` with ``half_weights = True`` in the config class
    if not site.arms or any(not isinstance(branch, cst.If) or test is None for branch, test, _i in site.arms):
        return True
    if any(_INFERENCE_WORDS.search(model.code_for(test)) for _b, test, _i in site.arms):
        return True
    # ``if args.fp16: model.half()`` with ``GradScaler(enabled=args.fp16)``: the flag that makes
    # the weights fp16 enables the scaler, the first step raises whenever it is on; a scaler
    # enabled by another expression may be off exactly then (``enabled=not args.half``)
    tests = {" ".join(model.code_for(test).split()) for _b, test, i in site.arms if i == 0}
    for c in uf.ctors:
        if c.enabled is None:
            a = c.arg("enabled")
            if a is None or " ".join(model.code_for(a.value).split()) not in tests:
                return True
    return False


def _constant_guard(model, site, off: bool = False) -> bool:
    """Every condition the conversion sits under is a configuration constant that selects it
    (``off``: some condition is one that never selects it)."""
    if off:
        return any(isinstance(branch, cst.If) and test is not None and _constant(model, site.func, test, i != 0)
                   for branch, test, i in site.arms)
    return bool(site.arms) and all(isinstance(branch, cst.If) and test is not None
                                   and _constant(model, site.func, test, i == 0) for branch, test, i in site.arms)


def _constant(model, func, test, truth: bool) -> bool:
    """``test`` only ever holds literals of that truth (a config class's ``half_weights = True``
    that nothing rebinds, or the field default of the config class a parameter is annotated
    with: ``cfg: SegConfig`` with ``half_precision: bool = True``)."""
    vals = model.values.of(func, test)
    if vals and all(v.kind == "literal" and bool(v.data) is truth for v in vals):
        return True
    if not isinstance(test, cst.Attribute) or not isinstance(test.value, cst.Name):
        return False
    binds = model.scopes.lookup(func, test.value.value)
    if len(binds) != 1 or binds[0].kind != "param" or binds[0].annotation is None:
        return False
    ann = binds[0].annotation
    text = dotted_text(ann.annotation if isinstance(ann, cst.Annotation) else ann)
    for cls in (model.scopes.classes_named(text, gated=False) if text else [])[:1]:
        owner = getattr(cls, "owner_model", None) or model
        # (``half_precision: bool = True``: the annotation's ``bool`` says nothing more)
        vals = {v for b in owner.scopes.attr(cls, test.attr.value) for v in owner.values.binding(b) if v.kind != "bool"}
        return bool(vals) and all(v.kind == "literal" and bool(v.data) is truth for v in vals)
    return False


def _is_fp16_conversion(model, site) -> bool:

    if site.method == "half" and not site.node.args and site.recv_node is not None:
        return True
    if site.method == "to" and site.recv_node is not None:
        for a in site.node.args:
            if a.keyword is not None and a.keyword.value != "dtype":
                continue
            if model.imports.qualify(a.value) in T.FLOAT16:
                return True
    return False


def _undone(model, site) -> bool:
    """``m.half().float()``: converted back in the same expression."""
    parent = model.parent_call_of(site.node)
    return parent is not None and parent.recv_node is site.node and parent.method in ("float", "double", "to", "type")


def _module_keys(model, site) -> tuple[str, ...]:
    """The dotted names of the module being converted: the receiver (``model`` in
    ``model.half()``) and the names the result is bound to (``self.model = model.half()``).
    Empty for a copy, a temporary or anything we cannot name."""


    node = site.recv_node
    while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in _CHAIN:
        node = node.func.value
    keys: list[str] = []
    if isinstance(node, (cst.Name, cst.Attribute)):
        text = dotted_text(node)
        if text is not None:
            keys.append(text)
    elif isinstance(node, cst.Call):
        callee = dotted_text(node.func) or ""
        if callee.rsplit(".", 1)[-1] in ("deepcopy", "copy", "clone", "de_parallel", "unwrap_model"):
            return ()
    else:
        return ()
    # ``model = Net().cuda().half()``: the name the chain is bound to
    top = site.node
    while True:
        parent = model.parent_call_of(top)
        if parent is not None and parent.recv_node is top and parent.method in _CHAIN:
            top = parent.node
            continue
        break
    stmt = site.stmt
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Assign):
        assign = stmt.body[0]
        if assign.value is top:
            for t in assign.targets:
                text = dotted_text(t.target)
                if text is not None and text not in keys:
                    keys.append(text)
    return tuple(keys)


def _same_scope(key: str, f1, f2) -> bool:
    """``key`` names the same object in functions ``f1`` and ``f2``."""

    if f1 is f2:
        return True
    head = key.split(".", 1)[0]
    if head == "self":
        return owner_class(f1) is not None and owner_class(f1) is owner_class(f2)
    return not f1.is_local(head) and not f2.is_local(head)


def _in_eval(site) -> bool:
    regions = list(site.func.regions) + list(site.regions)
    return any(r.kind in ("no_grad", "eval", "eval_name") for r in regions)


def _frozen(model, key: str) -> bool:

    for c in model.calls:
        if c.recv != key:
            continue
        if c.method in ("requires_grad_", "train") and c.node.args and _false(c.node.args[0].value):
            return True
        if c.method in ("parameters", "named_parameters") and isinstance(c.stmt, cst.For):
            if _freezes_each(c.stmt.body):
                return True
    return False


def _freezes_each(body) -> bool:
    """The loop body turns every parameter's gradient off: ``p.requires_grad = False`` or
    ``p.requires_grad_(False)`` as a statement of its own (not ``p.requires_grad = "lora_" in n``,
    which leaves the adapters trainable, nor one under an ``if``)."""
    for stmt in body.body if isinstance(body, cst.IndentedBlock) else ():
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, cst.Assign) and _false(small.value) and any(
                    isinstance(t.target, cst.Attribute) and t.target.attr.value == "requires_grad" for t in small.targets):
                return True
            if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and isinstance(small.value.func, cst.Attribute) \
                    and small.value.func.attr.value == "requires_grad_" and small.value.args and _false(small.value.args[0].value):
                return True
    return False


def _only_evaluated(model, key: str) -> bool:
    """``key.eval()`` is called and ``key.train()`` (to train mode) never is."""
    evaluated = False
    for c in model.calls:
        if c.recv != key:
            continue
        if c.method == "eval":
            evaluated = True
        elif c.method == "train" and not (c.node.args and _false(c.node.args[0].value)):
            return False
    return evaluated


def _false(node) -> bool:

    return isinstance(node, cst.Name) and node.value == "False"


def _related(a: str, b: str) -> bool:
    return a == b or a.startswith(b + ".") or b.startswith(a + ".")


def _optimizers(model) -> list[tuple[tuple[str, ...], set[str], object]]:
    """``(targets, modules whose parameters it holds, constructing function)`` per optimizer
    constructor, bound to names or returned by a builder (``return torch.optim.SGD(params)``:
    no targets)."""
    from .values import _returns

    out = []
    for a in model.assignments:
        if isinstance(a.value, cst.Call) and T.is_optimizer_class(model.imports.qualify(a.value.func)):
            out.append((tuple(t for t in a.targets if t is not None), _held_modules(model, a.func, a.value), a.func))
    for func in model.functions:
        for r in _returns(func):
            if isinstance(r, cst.Call) and T.is_optimizer_class(model.imports.qualify(r.func)):
                out.append(((), _held_modules(model, func, r), func))
    return out


def _held_modules(model, func, ctor: cst.Call) -> set[str]:
    """The modules whose parameters the optimizer constructor ``ctor`` is given."""
    modules: set[str] = set()
    params = ctor.args[0].value if ctor.args and ctor.args[0].keyword is None else None
    for arg in ctor.args:
        if arg.keyword is not None and arg.keyword.value == "params":
            params = arg.value
    if params is not None:
        modules |= _param_sources(model, func, params)
        if isinstance(params, cst.Name):  # ``params = model.parameters()`` one step back
            for b in model.assignments:
                if b.func is func and params.value in b.targets and b.value is not None:
                    modules |= _param_sources(model, func, b.value)
    return modules


def _param_sources(model, func, node) -> set[str]:


    out = set()
    for call in calls_in(node):
        f = call.func
        if isinstance(f, cst.Attribute) and f.attr.value in ("parameters", "named_parameters"):
            text = dotted_text(f.value)
            if text is not None:
                out.add(text)
    return out


def _stepped(model, steps) -> set[str]:

    out = set()
    for s in steps:
        a = s.arg(0, "optimizer")
        if a is not None:
            k = expr_key(a.value)
            if k is not None:
                out.add(k)
    return out


def _is_stepped(target: str, stepped: set[str]) -> bool:
    last = target.rsplit(".", 1)[-1]
    return target in stepped or any(s.rsplit(".", 1)[-1] == last for s in stepped)


def _trained(model, site, keys: tuple[str, ...], optimizers, stepped: set[str], steps) -> bool:
    func = site.func
    order = {id(c.node): i for i, c in enumerate(func.calls)}
    here = order.get(id(site.node), -1)
    steps_after = [s for s in steps if s.func is func and order.get(id(s.node), -1) > here]
    sourced = [o for o in optimizers if o[1]]
    holding = [
        o for o in sourced if any(_related(k, m) and _same_scope(k, func, o[2]) for k in keys for m in o[1])
    ]
    if holding:
        # an optimizer of this file holds the module's parameters: is it stepped by the scaler?
        for targets, _modules, ctor_func in holding:
            if not any(_is_stepped(t, stepped) for t in targets):
                continue
            if steps_after:
                return "held"
            if ctor_func is func or func.name.startswith(_SETUP_NAMES):
                if not any(s.func is func for s in steps):  # not "convert after the training loop"
                    return "held"
        return False
    if _handed_to_trainer(model, func, here, order, keys, sourced, stepped) or (
            not func.is_module and _returned_to_training(model, func, keys)):
        return "held"
    if not steps_after or any(p in k.rsplit(".", 1)[-1].lower() for k in keys for p in _NOT_TRAINED):
        return False
    # the optimizers stepped here are built in this scope over other modules: not this one
    for s in steps_after:
        a = s.arg(0, "optimizer")
        text = model.code_for(a.value) if a is not None else None
        if any(text in targets and _same_scope(text, func, ctor_func) for targets, _m, ctor_func in sourced):
            return False
    # the optimizer comes from elsewhere: the function converts the module, calls it, then steps
    for c in func.calls:
        if order.get(id(c.node), -1) <= here:
            continue
        if any(c.text == k or c.text == k + ".forward" for k in keys) and not _in_eval(c):
            return True
    return False


def _handed_to_trainer(model, func, here: int, order, keys, sourced, stepped) -> bool:
    """After the conversion, the module is passed to code that trains it (``train_model(model=
    model, ...)``, ``Engine(cfg).fit(model, loader)``, in this file or another project module)."""
    for c in func.calls:
        if order.get(id(c.node), -1) <= here:
            continue
        hit = model.target_of(c)
        if hit is None or hit[1] is func:
            continue
        params = _params_bound(c, hit[1], keys)
        if params and _trains(hit[0], hit[1], tuple(params), 1):
            return True
    return False


def builders(model) -> list:
    """Functions of the file that convert a module to float16 and return it."""
    out = []
    for site in model.calls:
        if site.in_lambda or site.func.is_module or site.func in out or not _is_fp16_conversion(model, site):
            continue
        keys = _module_keys(model, site)
        if keys and _returned(site.func, keys):
            out.append(site.func)
    return out


def _returned_to_training(model, func, keys, always: bool = False) -> bool:
    """``func`` returns the converted module (a model builder) to a caller, of this file or
    another project module, that trains it (:func:`_trains`; ``always``: with a scaler that is
    built unconditionally and always enabled)."""
    if not _returned(func, keys):
        return False
    calls = [(model, c) for f in model.functions for c in f.calls if model.callee_of(c) is func]
    for im, call in calls + model.external_calls(func):
        node = call.node
        while True:  # ``model = build_segmentor(cfg).cuda()``
            up = im.parent_call_of(node)
            if up is None or up.recv_node is not node or up.method not in _MOVES or (
                    up.method == "to" and any(T.dtype_kind(im.imports.qualify(a.value)) for a in up.node.args)):
                break  # (``.float()``, ``.to(torch.float32)`` undo the conversion)
            node = up.node
        targets = tuple(b.name for b in im.bindings if b.value is node and b.func is call.func)
        if targets and _trains(im, call.func, targets, always=always):
            return True
        # handed on as it is built: ``Runner(cfg, build_model(cfg), device)``
        parent = im.parent_call_of(call.node)
        hit = im.target_of(parent) if parent is not None else None
        if hit is not None:
            params = _params_bound(parent, hit[1], (), node=call.node)
            if params and _trains(hit[0], hit[1], tuple(params), 1, always):
                return True
    return False


def _trains(model, func, keys, depth: int = 0, always: bool = False) -> bool:
    """``keys`` name a module in ``func``: an optimizer ``func`` builds over its parameters is
    stepped by an enabled (not sharded) GradScaler of ``model`` (or, where ``model`` steps no
    scaler itself, goes with its scaler to code that does), or ``func`` hands the module on to
    code that does (at most three calls deep). ``always``: every scaler of ``model`` is built
    unconditionally and always enabled."""
    uf = facts(model)
    if always and any(c.enabled is not True or guarded(c.site.func, c.site.stmt) for c in uf.ctors):
        return False
    if uf.ctors and not all(c.enabled is False for c in uf.ctors) and not any(c.is_sharded for c in uf.ctors):
        steps = uf.calls("step")
        stepped = _stepped(model, steps)
        for targets, modules, ctor_func in _optimizers(model):
            if ctor_func is func and any(_related(k, m) for k in keys for m in modules) and (
                    not steps or any(_is_stepped(t, stepped) for t in targets)):
                return True
    if depth >= 3:
        return False
    for c in func.calls:
        hit = model.target_of(c)
        if hit is None or hit[1] is func:
            continue
        params = _params_bound(c, hit[1], keys)
        if params and _trains(hit[0], hit[1], tuple(params), depth + 1, always):
            return True
    return False


def _params_bound(call, callee, keys, node=None) -> list[str]:
    """The parameters of ``callee`` that ``call`` binds to one of ``keys`` (or to ``node``)."""
    offset = 1 if callee.cls is not None and not callee.is_static and callee.params[:1] in (["self"], ["cls"]) else 0
    out = []
    for i, a in enumerate(call.node.args):
        if a.star:
            break
        if a.value is not node and dotted_text(a.value) not in keys:
            continue
        if a.keyword is not None:
            if a.keyword.value in callee.params:
                out.append(a.keyword.value)
        elif i + offset < len(callee.params):
            out.append(callee.params[i + offset])
    return out


def _built_for_importers(model, uf) -> list:
    """A model builder of another module (``models/builder.py: build_model`` returning
    ``model.half()``) whose result a project module trains with an enabled GradScaler: an
    optimizer over its parameters, in a module that builds the scaler. A conversion under an
    ``if`` counts only when the builder's module also builds the scaler, enabled by the very
    flag the ``if`` tests (``if cfg.fp16: model = model.half()`` beside ``GradScaler("cuda",
    enabled=cfg.fp16)``): whenever the flag is on, the first ``step`` raises; or when the flag
    is a configuration constant that is on (``half_precision: bool = True`` in the config class)."""
    if uf.ctors and all(c.enabled is False for c in uf.ctors):
        return []
    out = []
    for site in model.calls:
        if site.in_lambda or site.func.is_module or not _is_fp16_conversion(model, site) or _undone(model, site):
            continue
        keys = _module_keys(model, site)
        if not keys or not _returned(site.func, keys):
            continue
        always = False
        if guarded(site.func, site.stmt):
            if any(_INFERENCE_WORDS.search(model.code_for(t)) for _b, t, _i in site.arms):
                continue
            if uf.ctors and _guard_excuses(model, site, uf):
                continue
            # under a flag of its own (``if cfg.model.fp16_weights:``): counts where the scaler
            # that trains the model is always on, whatever the flag (``GradScaler("cuda")``),
            # unless the flag is a configuration constant that is off (``half_weights = False``)
            if not uf.ctors and _constant_guard(model, site, off=True):
                continue
            always = not uf.ctors and not _constant_guard(model, site)
        if _returned_to_training(model, site.func, keys, always):
            out.append((site, keys))
    return out


def _returned(func, keys) -> bool:
    """The function returns (one of) ``keys``, or a module built around it."""
    from .syntax import expr_key as _key
    from .values import _returns

    def base(node):
        while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in _CHAIN:
            node = node.func.value
        return node

    def wrapped(node):
        # ``return SegFormer(backbone, head)``: a module built around the converted one
        return isinstance(node, cst.Call) and any(a.keyword is None and not a.star and _key(a.value) in keys
                                                  for a in node.args)

    return any(_key(r) in keys or _key(base(r)) in keys or wrapped(base(r)) for r in _returns(func))

