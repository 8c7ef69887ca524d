"""Dtypes of values: which tensors come out of a float16 autocast region.

A value is float16 when it is computed inside an enabled float16 autocast region (the innermost
autocast region decides: ``autocast(enabled=False)`` or a bfloat16 region inside switches it
off), or from such a value, following bindings in source order: the latest binding of a name
before the point of use counts, and an augmented assignment keeps what the name held
(``loss = 0`` then ``loss += criterion(...)`` under float16 autocast is float16).

An autocast whose ``enabled=`` is an expression (``enabled=args.amp``, ``enabled=(device ==
"cuda")``) may be enabled; only the arm of a branch that tests the same expression false is
known to run without it.
"""

from __future__ import annotations

import re

import libcst as cst

from .. import torch_api as T
from .names import dotted_text
from .syntax import children, literal_value

_MAX_DEPTH = 8
_SCALER_WORDS = ("scaler", "loss_scale")


def _compact(text: str) -> str:
    return re.sub(r"\s+", "", text)


class Dtypes:
    def __init__(self, model) -> None:
        self.m = model
        self._memo: dict[tuple, object] = {}

    # --- regions -------------------------------------------------------------------------------

    def fp16_region(self, r, on_cuda: bool = False) -> bool:
        """An autocast region that may run in float16: float16 by its dtype or its device's
        default, and not literally disabled. ``on_cuda``: also a region without a dtype whose
        device may be CUDA (``device_type=device`` with ``device`` "cuda" when available): on a
        GPU machine it autocasts to float16."""
        from .autocast_facts import effective_dtype, intended, possible_devices

        if r.kind != "autocast":
            return False
        device, dtype, enabled = intended(self.m, r)
        if enabled is False:
            return False
        if effective_dtype(self.m, r) == "float16":
            return True
        return on_cuda and dtype is None and device == "" and "cuda" in possible_devices(self.m, r)

    def _innermost_fp16(self, regions, on_cuda: bool = False) -> object | None:
        for r in reversed(regions):
            if r.kind == "autocast":
                return r if self.fp16_region(r, on_cuda) else None
        return None

    def enabled_expr(self, r):
        """The ``enabled=`` expression of an autocast region when it is not a literal."""
        call = r.node
        if not isinstance(call, cst.Call):
            return None
        spec = T.AUTOCASTS.get(self.m.imports.qualify(call.func) or "")
        params = spec.params if spec is not None else T.AUTOCAST_PARAMS
        pos = [a for a in call.args if a.keyword is None and not a.star]
        node = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "enabled"), None)
        if node is None and "enabled" in params and params.index("enabled") < len(pos):
            node = pos[params.index("enabled")].value
        if node is None or isinstance(literal_value(node), bool):
            return None
        return node

    def disabled_here(self, arms, r) -> bool:
        """The arms around a point test ``r``'s ``enabled=`` expression and take its false side."""
        e = self.enabled_expr(r)
        if e is None:
            return False
        want = _compact(self.m.code_for(e))
        for _owner, test, arm in arms:
            text = _compact(self.m.code_for(test))
            if (text == want or text == f"({want})") and arm == 1:
                return True
            if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not) and arm == 0 \
                    and _compact(self.m.code_for(test.expression)) in (want, f"({want})"):
                return True
        return False

    def exclusive(self, arms, other) -> bool:
        """Two points never run in one pass: arms of one ``if`` with different indexes, or of two
        ``if``s testing the same expression (``if not self.use_amp:`` written twice)."""
        if not arms or not other:
            return False
        for owner, test, i in arms:
            for owner2, test2, j in other:
                if i == j:
                    continue
                if owner is owner2 or test is not None and test2 is not None and (
                        _compact(self.m.code_for(test)) == _compact(self.m.code_for(test2))):
                    return True
        return False

    # --- taint ---------------------------------------------------------------------------------

    def fp16_source(self, func, expr, pos: int, depth: int = 0, on_cuda: bool = False, arms=()):
        """The float16 region ``expr`` (read in ``func`` at source position ``pos``, inside the
        exclusive ``arms``) comes from, or None (``on_cuda``: see :meth:`fp16_region`)."""
        if expr is None or depth > _MAX_DEPTH:
            return None
        for key in _keys(expr):
            hit = self._key_source(func, key, pos, depth, on_cuda, arms)
            if hit is not None:
                return hit
        return None

    def _key_source(self, func, key: str, pos: int, depth: int, on_cuda: bool, arms=()):
        bindings = [b for b in self.m.values.bindings_of_key(func, key) if b.order < pos and b.kind != "item"
                    and not self.exclusive(b.arms, arms)]
        if not bindings:
            return None
        last = max(bindings, key=lambda b: b.order)
        memo_key = (id(last), depth > 4, on_cuda)
        if memo_key in self._memo:
            return self._memo[memo_key]
        self._memo[memo_key] = None
        hit = self._binding_source(last, bindings, depth, on_cuda)
        self._memo[memo_key] = hit
        return hit

    def _binding_source(self, b, bindings, depth: int, on_cuda: bool):
        if _no_grad(b.regions):
            return None  # (a frozen teacher's fp16 logits: no gradient flows back through them)
        r = self._innermost_fp16(b.regions, on_cuda)
        if r is not None and b.kind in ("assign", "ann", "aug", "walrus") and _computes(b.value):
            return r
        if b.value is not None and b.kind not in ("param", "import", "def", "class"):
            hit = self.fp16_source(b.func, b.value, b.order, depth + 1, on_cuda, b.arms)
            if hit is not None:
                return hit
            hit = self._returned_source(b.value, depth, on_cuda)
            if hit is not None:
                return hit
        if b.kind == "aug":
            earlier = [x for x in bindings if x.order < b.order]
            if earlier:
                prev = max(earlier, key=lambda x: x.order)
                return self._binding_source(prev, earlier, depth + 1, on_cuda)
        return None

    def _returned_source(self, value, depth: int, on_cuda: bool):
        """``loss = self.train_one_batch(batch)``: the float16 region a function of this file
        returns its value from (computed in the region, or bound there)."""
        site = self.m.call_of.get(value) if type(value) is cst.Call else None
        callee = self.m.callee_of(site) if site is not None else None
        if callee is None or callee is site.func or depth >= _MAX_DEPTH:
            return None
        for ret in self.m.values.returns_of(callee):
            inner = self.m.call_of.get(ret) if type(ret) is cst.Call else None
            r = self._innermost_fp16(inner.regions, on_cuda) if inner is not None and not _no_grad(inner.regions) else None
            if r is None:
                r = self.fp16_source(callee, ret, _END, depth + 1, on_cuda)
            if r is not None:
                return r
        return None

    # --- facts for AMP106 ----------------------------------------------------------------------

    def has_scaler_evidence(self) -> bool:
        """A GradScaler, or any name that says one (``scaler``, ``loss_scale``), anywhere in the file."""
        m = self.m
        if m.scalers.any():
            return True

        def scalerish(text) -> bool:
            t = (text or "").lower()
            return any(w in t for w in _SCALER_WORDS)

        def other(func, key) -> bool:
            """``key`` holds only instances of other classes (sklearn's ``StandardScaler()``), or
            is such a class imported from a data library."""
            vals = m.values.of_key(func, key)
            return bool(vals) and all(v.kind == "other" or v.kind == "import" and _data_library(v.data or "")
                                      for v in vals)

        return (any(scalerish(p) for f in m.functions for p in f.params)
                or any(scalerish(c.text) and not other(c.func, c.recv if c.recv is not None else c.text) for c in m.calls)
                or any(scalerish(b.name) and not other(b.func, b.name) for b in m.bindings)
                or any((scalerish(k) or scalerish(v)) and not _data_library(v) for k, v in m.imports.names.items())
                or self._calls_scaler_owner())

    def _calls_scaler_owner(self) -> bool:
        """The file calls a function or builds an object of a project module that holds a
        GradScaler (an optimizer wrapper owning one): its backward may be that scaler's."""
        m = self.m
        link = m.project
        if link is None:
            return False
        for c in m.calls:
            qual = m.imports.resolve(c.text) if c.text is not None else None
            hit = link.symbol(qual) if qual is not None else None
            if hit is not None and hit[0] is not m and hit[0].scalers.any():
                return True
        # a subclass of a project class whose module holds one (``class KD(BaseTrainer)``,
        # whose inherited ``optimizer_step`` steps ``self.scaler``)
        for cls in m.classes:
            for qual in cls.base_quals:
                hit = link.symbol(qual) if qual is not None else None
                if hit is not None and hit[0] is not m and hit[0].scalers.any():
                    return True
        return False

    def fp16_backwards_without_scaler(self) -> list:
        """Backward calls of a float16 autocast value in a file with no GradScaler in sight."""
        m = self.m
        if not any(self.fp16_region(r, on_cuda=True) for r in m.regions):
            return []
        out = []
        candidates = [s for s in m.calls if not s.in_lambda and (s.method == "backward" and s.recv_node is not None
                                                                 or s.qual in T.AUTOGRAD_BACKWARD)]
        if not candidates or self.has_scaler_evidence():
            return []
        for site in candidates:
            if site.qual in T.AUTOGRAD_BACKWARD:
                arg = site.arg(0, "tensors")
                expr = arg.value if arg is not None else None
            else:
                expr = site.recv_node
            r = self.fp16_source(site.func, expr, site.order, on_cuda=True, arms=site.arms)
            if r is None and isinstance(expr, cst.Call):
                r = self._innermost_fp16(site.regions, on_cuda=True)  # computed right there, inside the region
            if r is not None and not self.disabled_here(site.arms, r):
                out.append(site)
        return out


#: a position after every binding of a function (its returns read them all)
_END = 1 << 30


def _no_grad(regions) -> bool:
    """The innermost grad-mode region is ``no_grad``/``inference_mode``."""
    for r in reversed(regions):
        if r.kind == "no_grad":
            return True
        if r.kind == "enable_grad":
            return False
    return False


def _data_library(qual: str) -> bool:
    """An import from a library whose "scalers" rescale data, not losses."""
    return qual.split(".", 1)[0] in _DATA_LIBRARIES


#: libraries whose ``*Scaler`` classes rescale features or targets (sklearn's StandardScaler)
_DATA_LIBRARIES = frozenset({"sklearn", "cuml", "pyspark", "dask_ml", "sktime", "darts"})


def _computes(node) -> bool:
    """The expression calls something (a module, a loss, an operator method)."""
    stack = [node] if node is not None else []
    while stack:
        n = stack.pop()
        if isinstance(n, (cst.Call, cst.BinaryOperation)):
            return True
        if not isinstance(n, cst.Lambda):
            stack.extend(children(n))
    return False


def _keys(expr) -> list[str]:
    """The dotted names an expression reads, and their prefixes (``self.loss`` -> ``self``)."""
    out: list[str] = []
    stack = [expr]
    while stack:
        n = stack.pop()
        if isinstance(n, (cst.Name, cst.Attribute)):
            text = dotted_text(n)
            if text is not None:
                parts = text.split(".")
                for i in range(len(parts), 0, -1):
                    key = ".".join(parts[:i])
                    if key not in out:
                        out.append(key)
                continue
        if isinstance(n, cst.Lambda):
            continue
        stack.extend(children(n))
    return out
