from __future__ import annotations

import re
from typing import Iterable

from .base import Finding, Rule

#: names that carry the scale factor (``inv_scale = 1.0 / scaler.get_scale()``)
_SCALE_NAME = re.compile(r"^_?(inv_?)?(loss_|grad_|cur_|current_)?scale(_factor|_inv|_value)?$|^inv_", re.I)


class GradPenaltyNotUnscaled(Rule):
    """## What it does
    Checks for `torch.autograd.grad` called on a scaled output (`scaler.scale(loss)`, or a
    name bound to it) whose gradients are then used without dividing by the scale: the
    function never reads `scaler.get_scale()` (nor a `scale` / `inv_scale` value).

    The finding is reported on the `torch.autograd.grad(...)` call.

    ## Why is this bad?
    Gradients of a scaled loss are multiplied by the scale factor. `scaler.unscale_` only
    unscales the `.grad` fields of an optimizer's parameters; gradients returned by
    `autograd.grad` belong to no optimizer and stay scaled. A gradient-norm penalty built
    from them is inflated exactly by the scale (measured: 5446.2 instead of 5.3186 at a scale
    of 1024; a squared-norm penalty is off by the square), so the penalty swamps the loss
    and its weight changes every time the scale does.

    ## Example
    ```python
    grads = torch.autograd.grad(scaler.scale(loss), params, create_graph=True)
    with torch.autocast("cuda", dtype=torch.float16):
        penalty = torch.stack([g.pow(2).sum() for g in grads]).sum().sqrt()
        loss = loss + penalty
    scaler.scale(loss).backward()
    ```

    ## Use instead
    ```python
    scaled = torch.autograd.grad(scaler.scale(loss), params, create_graph=True)
    inv_scale = 1.0 / scaler.get_scale()
    grads = [g * inv_scale for g in scaled]
    with torch.autocast("cuda", dtype=torch.float16):
        penalty = torch.stack([g.pow(2).sum() for g in grads]).sum().sqrt()
        loss = loss + penalty
    scaler.scale(loss).backward()
    ```

    ## Known problems
    The check is per function: gradients returned to a caller (or a scale factor received as
    a parameter) are not followed, and any read of `get_scale()` in the function counts as
    unscaling. The inverse mistake, `autograd.grad` of an unscaled fp16 loss (underflow), is
    not reported here.

    ## Fix safety
    No fix is offered: where the gradients are used varies too much.

    ## References
    - [AMP examples: gradient penalty](https://pytorch.org/docs/stable/notes/amp_examples.html#gradient-penalty)
    - [`torch.autograd.grad`](https://pytorch.org/docs/stable/generated/torch.autograd.grad.html)
    """

    code = "AMP010"
    name = "grad-penalty-not-unscaled"
    message = "Gradients of `{scaler}.scale(...)` are used without dividing by `{scaler}.get_scale()`"
    fix_title = None
    fix_availability = "none"
    triggers = ("scaler",)
    reported_on = "the `torch.autograd.grad(...)` call"

    def check(self, model) -> Iterable[Finding]:
        import libcst as cst

        from ..model.names import AUTOGRAD_GRAD
        from ..model.usage import name_uses

        for site in model.calls:
            if site.qual not in AUTOGRAD_GRAD or site.in_lambda:
                continue
            out = site.arg(0, "outputs")
            if out is None:
                continue
            scaler = _scaled_by(model, site, out.value)
            if scaler is None or _reads_scale(model, site.func):
                continue
            targets = _result_names(site)
            if targets is None:
                continue
            if targets:
                uses = [u for u in name_uses(site.func, targets) if not u.store]
                # used, and not only handed back to a caller
                real = [u for u in uses if not (u.parent()[0] is not None and isinstance(u.parent()[0], cst.Return))]
                if not real:
                    continue
            yield Finding(node=site.node, stmt=site.stmt, message=self.message.format(scaler=scaler))


def _scaled_by(model, site, value) -> str | None:
    """The scaler text when ``value`` is ``S.scale(...)`` or a local name bound to it."""
    import libcst as cst

    from ..model.names import dotted_text

    def scale_call(v) -> str | None:
        if isinstance(v, cst.Call) and isinstance(v.func, cst.Attribute) and v.func.attr.value == "scale":
            recv = dotted_text(v.func.value)
            if recv is not None and model.is_scaler(site.func, recv):
                return recv
        return None

    hit = scale_call(value)
    if hit is not None:
        return hit
    if isinstance(value, (cst.List, cst.Tuple)):
        for el in value.elements:
            hit = scale_call(el.value)
            if hit is not None:
                return hit
        return None
    if isinstance(value, cst.Name):
        found = None
        for a in model.assignments:
            if a.func is site.func and value.value in a.targets:
                hit = scale_call(a.value)
                if hit is None:
                    return None  # also bound to something else: unclear
                found = hit
        return found
    return None


def _reads_scale(model, func) -> bool:
    """``func`` reads the scale factor: ``get_scale()``, ``S._scale``, or a name like ``inv_scale``."""
    for c in func.calls:
        if c.method in ("get_scale", "_get_scale_async") and not _logged(model, c):
            return True
    return any(_SCALE_NAME.match(n) for n in _value_names(func))


_LOG_SINKS = frozenset({"append", "print", "log", "info", "debug", "add_scalar", "add_scalars", "log_metrics", "log_dict"})


def _logged(model, site) -> bool:
    """``scales.append(scaler.get_scale())``: the scale is recorded, not used on the gradients."""
    parent = model.parent_call_of(site.node)
    if parent is None or parent.recv_node is site.node:
        return False
    last = (parent.text or "").rsplit(".", 1)[-1]
    return last in _LOG_SINKS


def _value_names(func) -> set[str]:
    """Names and attribute names read in ``func`` (callee attributes excluded: ``S.scale(x)``)."""
    import libcst as cst

    from ..model.syntax import children

    out: set[str] = set()
    stack = list(func.body)
    while stack:
        n = stack.pop()
        if isinstance(n, cst.Name):
            out.add(n.value)
            continue
        if isinstance(n, cst.FunctionDef):
            continue
        if isinstance(n, cst.Call):
            f = n.func
            stack.append(f.value if isinstance(f, cst.Attribute) else f)
            stack.extend(a.value for a in n.args)
            continue
        if isinstance(n, cst.Attribute):
            out.add(n.attr.value)
            stack.append(n.value)
            continue
        stack.extend(children(n))
    return out


def _result_names(site) -> set[str] | None:
    """Names bound to the call's result; empty when the result is used inline; None when it
    is discarded or stored somewhere we do not follow."""
    import libcst as cst

    from ..model.syntax import contains

    stmt = site.stmt
    if not isinstance(stmt, cst.SimpleStatementLine):
        return set()
    for small in stmt.body:
        if isinstance(small, cst.Assign) and contains(small.value, site.node):
            names: set[str] = set()
            for t in small.targets:
                _collect_names(t.target, names)
            return names or None
        if isinstance(small, cst.Expr) and small.value is site.node:
            return None  # result discarded
    return set()


def _collect_names(node, out: set[str]) -> None:
    import libcst as cst

    if isinstance(node, cst.Name):
        out.add(node.value)
    elif isinstance(node, (cst.Tuple, cst.List)):
        for el in node.elements:
            _collect_names(el.value, out)
    elif isinstance(node, cst.StarredElement):
        _collect_names(node.value, out)
