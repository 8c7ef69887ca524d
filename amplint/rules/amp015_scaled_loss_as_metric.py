from __future__ import annotations

from typing import Iterable

from .base import Finding, FixPlan, NodeEdit, Rule
from .common import recv_text

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


class ScaledLossAsMetric(Rule):
    """## What it does
    Checks for the output of `scaler.scale(x)` used as a number for logging or metrics:
    `scaler.scale(loss).item()`, `float(scaler.scale(loss))`, or a name bound to
    `scaler.scale(loss)` that is then printed, logged, appended to a list, formatted or
    accumulated (`total += scaled.item()`), or converted and returned (`return scaled.item()`).
    Backpropagating it
    (`scaler.scale(loss).backward()`) is of course fine.

    The finding is reported on the use that turns the scaled value into a metric (for a
    name, on its first such use; the fix covers all of them). Scaler
    calls in evaluation code belong to AMP201 (`scaler-in-eval`) and are not reported again.

    ## Why is this bad?
    `scale()` multiplies the loss by the current scale factor (65536 at the start). The logged
    loss is that many times too large (measured: 4096 times, exactly the scale at that
    point), and since the scale halves on every overflow and doubles every 2000 clean steps,
    the curve shows jumps that have nothing to do with training.

    ## Example
    ```python
    scaled = scaler.scale(loss)
    scaled.backward()
    scaler.step(optimizer)
    scaler.update()
    running_loss += scaled.item()
    ```

    ## Use instead
    ```python
    scaled = scaler.scale(loss)
    scaled.backward()
    scaler.step(optimizer)
    scaler.update()
    running_loss += loss.item()
    ```

    ## Known problems
    Only uses in the same function, after the binding, are followed; a scaled loss returned
    to a caller that logs it is not seen. Values collected under other names than the sinks
    amplint knows (`print`, `log*`, `append`, `add_scalar`, `set_postfix`, `meter.update`,
    f-strings, `+=`) are not reported.

    ## Fix safety
    The fix makes the metric read the unscaled value and is safe: `scaler.scale(x).item()`
    becomes `x.item()`; a metric use of `scaled = scaler.scale(loss)` reads `loss` instead
    when `loss` is not rebound afterwards; `loss = scaler.scale(loss)` becomes
    `scaled_loss = scaler.scale(loss)` with its `backward()` calls renamed, when those and
    the metrics are its only uses. The gradients do not change.

    ## References
    - [`torch.amp.GradScaler.scale`](https://pytorch.org/docs/stable/amp.html#torch.amp.GradScaler.scale)
    - [AMP examples: typical mixed precision training](https://pytorch.org/docs/stable/notes/amp_examples.html)
    """

    code = "AMP015"
    name = "scaled-loss-as-metric"
    message = "The output of `{scaler}.scale()` is used as a metric: it is multiplied by the loss scale"
    fix_title = "Report the unscaled value"
    fix_availability = "sometimes"
    triggers = ("scaler",)
    reported_on = "the metric use of the scaled value"

    def check(self, model) -> Iterable[Finding]:
        import libcst as cst

        from ..model.usage import facts, in_eval_code, name_uses

        by_func: dict = {}
        for site in facts(model).calls("scale"):
            if in_eval_code(model, site):
                continue
            by_func.setdefault(site.func, []).append(site)
        for func, sites in by_func.items():
            bindings = {}  # scale node id -> (target Name node, statement)
            for a in model.assignments:
                if a.func is func and isinstance(a.value, cst.Call) and id(a.value) in {id(s.node) for s in sites}:
                    stmt_small = _small_assign(a.stmt, a.value)
                    if stmt_small is not None and len(stmt_small.targets) == 1 and isinstance(stmt_small.targets[0].target, cst.Name):
                        bindings[id(a.value)] = (stmt_small.targets[0].target, stmt_small)
            names = {t.value for t, _ in bindings.values()}
            arg_names = set()
            for s in sites:
                arg = s.arg(0, "outputs")
                if arg is not None and isinstance(arg.value, cst.Name):
                    arg_names.add(arg.value.value)
            uses = name_uses(func, names | arg_names | {"scaled_loss"}, {id(s.node) for s in sites})
            for site in sites:
                scaler = recv_text(model, site)
                message = self.message.format(scaler=scaler)
                bound = bindings.get(id(site.node))
                if bound is None:
                    use = next((u for u in uses if u.node is site.node), None)
                    if use is not None and _classify(use) == "metric":
                        yield Finding(node=site.node, stmt=site.stmt, message=message, fix=_inline_fix(model, site, use))
                    continue
                target, assign = bound
                after = _uses_after(uses, target.value, assign)
                kinds = [(u, _classify(u)) for u in after]
                metric = [u for u, k in kinds if k == "metric"]
                if not metric:
                    continue
                fix = _bound_fix(model, site, target, assign, kinds, uses)
                # one finding per scaled value, on its first metric use (the fix covers them all)
                u = metric[0]
                yield Finding(node=u.node, stmt=u.stmt, message=message, fix=fix)


def _small_assign(stmt, value):
    import libcst as cst

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


def _classify(use) -> str:
    """"backward" (``x.backward()``), "metric", or "other" for one use of a scaled value."""
    import libcst as cst

    from ..model.names import dotted_text

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


def _inline_fix(model, site, use) -> FixPlan | None:
    from ..model.usage import is_simple

    arg = site.arg(0, "outputs")
    if arg is None:
        return None
    text = model.code_for(arg.value)
    if not is_simple(arg.value):
        import libcst as cst

        parent, _ = use.parent()
        if not isinstance(parent, cst.Arg):
            text = f"({text})"
    return FixPlan("safe", ScaledLossAsMetric.fix_title, [NodeEdit("replace", site.node, text)])


def _bound_fix(model, site, target, assign, kinds, uses) -> FixPlan | None:
    import libcst as cst

    if any(k == "other" for _, k in kinds):
        return None
    arg = site.arg(0, "outputs")
    if arg is None or not isinstance(arg.value, cst.Name):
        return None
    source = arg.value.value
    name = target.value
    if name != source:
        # metric uses read the unscaled ``source`` instead, if nothing rebinds it afterwards
        start = next(u.index for u in uses if u.node is target)
        if any(u.name == source and u.store and u.index > start for u in uses):
            return None
        edits = [NodeEdit("replace", u.node, source) for u, k in kinds if k == "metric"]
        return FixPlan("safe", ScaledLossAsMetric.fix_title, edits)
    # ``loss = scaler.scale(loss)``: bind the scaled value to a new name used by backward only
    new = "scaled_loss" if name != "scaled_loss" else None
    if new is None or any(u.name == new for u in uses) or new in site.func.assigned or new in site.func.params:
        return None
    edits = [NodeEdit("replace", target, new)]
    edits += [NodeEdit("replace", u.node, new) for u, k in kinds if k == "backward"]
    return FixPlan("safe", ScaledLossAsMetric.fix_title, edits)
