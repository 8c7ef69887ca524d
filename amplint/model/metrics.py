"""Scaled values used as metrics (read by AMP015): the output of ``S.scale(x)`` that becomes a
number for logging or bookkeeping (``.item()``, ``float()``, ``print``, a logger, ``append``,
``+=``, a returned number), inline or through the name it is bound to.

:func:`scaled_metric_uses` gives, per ``S.scale(...)`` call, where it turns into a metric and what
a fix needs to know; :func:`classify` tells what one use of the value does with it.
"""

from __future__ import annotations

import libcst as cst

from .names import dotted_text
from .usage import facts, name_uses

#: calls whose arguments are logged or collected as metrics (the last name of the callee)
_SINKS = frozenset(
    {
        "print", "log", "info", "debug", "warning", "warn", "error", "add_scalar", "add_scalars", "log_metrics",
        "log_metric", "log_dict", "append", "extend", "set_postfix", "set_description", "write", "update",
    }
)
#: methods that keep the value (and its scale) while converting it
_THROUGH_METHODS = frozenset({"detach", "cpu", "clone", "float", "double", "mean", "sum", "to", "data", "squeeze"})
_TO_NUMBER = frozenset({"item", "tolist"})


class MetricUse:
    """A scaled value used as a metric: reported on ``node`` (the inline ``S.scale(...)`` call, or
    the first metric use of the name bound to it)."""

    __slots__ = ("site", "node", "stmt", "use", "bound", "kinds", "uses")

    def __init__(self, site, node, stmt, use=None, bound=None, kinds=(), uses=()):
        self.site, self.node, self.stmt, self.use = site, node, stmt, use
        self.bound, self.kinds, self.uses = bound, kinds, uses


def scaled_metric_uses(model) -> list[MetricUse]:
    out: list[MetricUse] = []
    by_func: dict = {}
    for site in facts(model).calls("scale"):
        by_func.setdefault(site.func, []).append(site)
    for func, sites in by_func.items():
        ids = {id(s.node) for s in sites}
        bindings = {}  # scale node id -> (target Name node, statement)
        for a in model.assignments:
            if a.func is func and isinstance(a.value, cst.Call) and id(a.value) in ids:
                small = _small_assign(a.stmt, a.value)
                if small is not None and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
                    bindings[id(a.value)] = (small.targets[0].target, small)
        names = {t.value for t, _ in bindings.values()}
        arg_names = set()
        for s in sites:
            arg = s.arg(0, "outputs")
            if arg is not None and isinstance(arg.value, cst.Name):
                arg_names.add(arg.value.value)
        uses = name_uses(func, names | arg_names | {"scaled_loss"}, ids)
        # (looked up by name and by node: thousands of scale calls must not each scan every use)
        by_name: dict = {}
        by_node: dict = {}
        for u in uses:
            by_name.setdefault(u.name, []).append(u)
            by_node.setdefault(id(u.node), u)
        for site in sites:
            bound = bindings.get(id(site.node))
            if bound is None:
                use = by_node.get(id(site.node))
                if use is not None and classify(use) == "metric":
                    out.append(MetricUse(site, site.node, site.stmt, use=use))
                continue
            target, assign = bound
            kinds = [(u, classify(u)) for u in _uses_after(by_name.get(target.value, ()), target.value, assign)]
            metric = [u for u, k in kinds if k == "metric"]
            if metric:
                # one finding per scaled value, on its first metric use (the fix covers them all)
                out.append(MetricUse(site, metric[0].node, metric[0].stmt, bound=bound, kinds=kinds, uses=uses))
    return out


def _small_assign(stmt, value):
    if isinstance(stmt, cst.SimpleStatementLine):
        for small in stmt.body:
            if isinstance(small, cst.Assign) and small.value is value:
                return small
    return None


def _uses_after(uses, name: str, assign) -> list:
    """Reads of ``name`` after the binding statement, up to the next binding of ``name``."""
    start = None
    out = []
    for u in uses:
        if u.name != name:
            continue
        if start is None:
            if u.stmt is assign and u.store:
                start = u.index
            continue
        if u.stmt is assign:
            continue
        if u.store:
            break
        out.append(u)
    return out


def classify(use) -> str:
    """"backward" (``x.backward()``), "metric", or "other" for one use of a scaled value."""

    parents = list(use.parents)
    i = len(parents) - 1
    converted = False
    first = True
    while i >= 0:
        p, fname = parents[i]
        if isinstance(p, cst.Attribute) and fname == "value":
            attr = p.attr.value
            is_call = i >= 1 and isinstance(parents[i - 1][0], cst.Call) and parents[i - 1][1] == "func"
            if not is_call:
                if attr == "data":
                    i -= 1
                    first = False
                    continue
                return "other"
            if attr == "backward" and first:
                return "backward"
            if attr in _TO_NUMBER:
                converted = True
            elif attr not in _THROUGH_METHODS:
                return "other"
            i -= 2
            first = False
            continue
        first = False
        if isinstance(p, cst.Arg):
            call = parents[i - 1][0] if i >= 1 else None
            if not isinstance(call, cst.Call):
                return "other"
            callee = dotted_text(call.func) or ""
            last = callee.rsplit(".", 1)[-1]
            if callee == "float" and len(call.args) == 1:
                converted = True
                i -= 2
                continue
            if last in _SINKS:
                return "metric"
            return "other"
        if isinstance(p, (cst.FormattedStringExpression,)):
            return "metric"
        if isinstance(p, (cst.Element, cst.DictElement, cst.List, cst.Tuple, cst.Dict)) and fname in ("value", "elements"):
            i -= 1
            continue
        if isinstance(p, cst.AugAssign) and fname == "value" and isinstance(p.operator, cst.AddAssign):
            return "metric"
        if isinstance(p, cst.BinaryOperation) and converted:
            i -= 1  # ``scaled.item() * k``: arithmetic on the number keeps the scale
            continue
        if isinstance(p, (cst.Assign, cst.Return)) and fname == "value" and converted:
            return "metric"  # a Python number is kept or handed back: only a metric can use it
        return "other"
    return "other"
