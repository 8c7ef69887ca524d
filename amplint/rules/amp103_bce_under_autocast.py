from __future__ import annotations

from typing import Iterable

from .base import Finding, FixPlan, NodeEdit, Rule

_MAX_DEPTH = 3


class BceUnderAutocast(Rule):
    """## What it does
    Checks for `binary_cross_entropy` (`torch.nn.functional.binary_cross_entropy`,
    `torch.binary_cross_entropy`) and `nn.BCELoss` calls that run under an enabled CUDA
    autocast region: lexically inside `with torch.autocast("cuda", ...)` (or
    `torch.cuda.amp.autocast()`, or a device that is not a literal), in a function decorated
    with autocast (an autocast-decorated `forward`), or in a helper of the same file called
    from such a region. A `BCELoss` call is a call of `nn.BCELoss()(p, y)`, or of a name or
    `self` attribute bound only to `nn.BCELoss(...)`.

    The finding is reported on the BCE call.

    A region with `enabled=<variable>` counts as enabled (the code is meant to run with
    autocast on); a nested `torch.autocast(..., enabled=False)`, an autocast region with the
    literal device `"cpu"`, and an unsupported dtype (autocast disabled) do not. The
    `_with_logits` variants are never reported.

    ## Why is this bad?
    CUDA autocast refuses these ops outright, whatever the inputs' dtype: `RuntimeError:
    torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast.`
    CPU autocast runs them in float32 without complaint, so a CPU-only test suite passes code
    that crashes on the first training step on a GPU.

    ## Example
    ```python
    with torch.autocast("cuda", dtype=torch.float16):
        logits = model(x)
        loss = F.binary_cross_entropy(torch.sigmoid(logits), y)
    ```

    ## Use instead
    ```python
    with torch.autocast("cuda", dtype=torch.float16):
        logits = model(x)
        loss = F.binary_cross_entropy_with_logits(logits, y)
    ```

    ## Known problems
    A model whose `forward` computes BCE and is called under autocast from another file (or
    through `model(x)`) is not seen. A region whose device is a variable that is always
    `"cpu"` at run time is reported although CPU autocast accepts BCE. Other backends that
    ban BCE under autocast (besides CUDA) are not considered.

    ## Fix safety
    When the input is literally `torch.sigmoid(z)` or `z.sigmoid()`, the safe fix calls
    `binary_cross_entropy_with_logits(z, ...)` (or `nn.BCEWithLogitsLoss(...)(z, ...)` for an
    inline module), which is the same loss, computed more stably. Otherwise the
    probabilities must be traced back to logits by hand, or the loss computed in float32
    under `torch.autocast(..., enabled=False)`; no fix is offered.

    ## References
    - [Autocast op reference: ops that can autocast to float32 and prefer binary_cross_entropy_with_logits](https://pytorch.org/docs/stable/amp.html#prefer-binary-cross-entropy-with-logits-over-binary-cross-entropy)
    - [`torch.nn.BCEWithLogitsLoss`](https://pytorch.org/docs/stable/generated/torch.nn.BCEWithLogitsLoss.html)
    """

    code = "AMP103"
    name = "bce-under-autocast"
    message = "`{call}` under CUDA autocast raises RuntimeError: use `{instead}` on the logits"
    fix_title = "Use `{instead}` on the logits and drop the sigmoid"
    fix_availability = "sometimes"
    triggers = ("autocast",)
    screen = "autocast_bce"
    reported_on = "the BCE call"

    def check(self, model) -> Iterable[Finding]:
        from ..model import autocast_facts as AF

        if not any(r.kind == "autocast" and _bad_region(model, r) for r in model.regions):
            return
        reached = _reached_functions(model)
        for site in model.calls:
            if site.in_lambda:
                continue
            kind = _bce_kind(model, site)
            if kind is None:
                continue
            r = AF.innermost_autocast(site.regions)
            if r is not None:
                if not _bad_region(model, r):
                    continue
            elif site.func not in reached:
                continue
            call = _callee_text(model, site, kind)
            instead = "F.binary_cross_entropy_with_logits" if kind == "functional" else "nn.BCEWithLogitsLoss"
            yield Finding(
                node=site.node,
                stmt=site.stmt,
                message=self.message.format(call=call, instead=instead),
                fix=_fix(model, site, kind, self.fix_title.format(instead=instead)),
            )


def _bad_region(model, r) -> bool:
    from ..model import autocast_facts as AF

    return AF.autocast_on(model, r) and AF.device_is_cuda_or_unknown(model, r)


def _reached_functions(model) -> set:
    """Functions of this file called (transitively) from a call that runs under CUDA autocast."""
    from ..model import autocast_facts as AF

    out: set = set()
    frontier = []
    for site in model.calls:
        r = AF.innermost_autocast(site.regions)
        if r is not None and _bad_region(model, r) and not site.in_lambda:
            callee = model.callee_of(site)
            if callee is not None and callee not in out:
                out.add(callee)
                frontier.append(callee)
    for _ in range(_MAX_DEPTH - 1):
        nxt = []
        for f in frontier:
            for site in f.calls:
                r = AF.innermost_autocast(site.regions)
                if r is not None and not _bad_region(model, r):
                    continue  # disabled again inside the helper
                callee = model.callee_of(site)
                if callee is not None and callee not in out:
                    out.add(callee)
                    nxt.append(callee)
        frontier = nxt
    return out


def _bce_kind(model, site) -> str | None:
    import libcst as cst

    from ..model import names as N

    if site.qual in N.BCE:
        return "functional"
    func = site.node.func
    if isinstance(func, cst.Call):
        q = model.imports.qualify(func.func) if isinstance(func.func, (cst.Name, cst.Attribute)) else None
        return "inline" if q in N.BCE_LOSS else None
    if site.text is not None and site.qual is None and _bound_to_bce_loss(model, site):
        return "instance"
    return None


def _bound_to_bce_loss(model, site) -> bool:
    import libcst as cst

    from ..model import autocast_facts as AF
    from ..model import names as N
    from ..model.scalers import owner_class

    text = site.text
    if text.startswith("self.") and text.count(".") == 1:
        cls = owner_class(site.func)
        if cls is None:
            return False
        assigns = [a for a in model.assignments if text in a.targets and owner_class(a.func) is cls]
    elif "." not in text:
        if AF.shadowed(site.func, text):
            return False
        scope = site.func if site.func.is_local(text) else model.top
        assigns = [a for a in model.assignments if text in a.targets and a.func is scope]
    else:
        return False
    if not assigns:
        return False
    for a in assigns:
        v = a.value
        if not isinstance(v, cst.Call) or model.imports.qualify(v.func) not in N.BCE_LOSS:
            return False
    return True


def _callee_text(model, site, kind: str) -> str:
    if kind == "inline":
        return model.code_for(site.node.func.func) + "()"
    return model.code_for(site.node.func)


def _sigmoid_arg(model, node):
    """``z`` for ``torch.sigmoid(z)`` / ``F.sigmoid(z)`` / ``z.sigmoid()``, else None."""
    import libcst as cst

    if not isinstance(node, cst.Call) or any(a.star for a in node.args):
        return None
    f = node.func
    q = model.imports.qualify(f) if isinstance(f, (cst.Name, cst.Attribute)) else None
    if q in ("torch.sigmoid", "torch.nn.functional.sigmoid", "torch.special.expit"):
        if len(node.args) == 1 and node.args[0].keyword is None:
            return node.args[0].value
        return None
    if isinstance(f, cst.Attribute) and f.attr.value == "sigmoid" and not node.args and q is None:
        return f.value
    return None


def _fix(model, site, kind: str, title: str) -> FixPlan | None:
    import libcst as cst

    from ..model import autocast_facts as AF

    call = site.node
    if AF.has_star(call):
        return None
    inp = AF.arg_node(call, 0, "input")
    if inp is None:
        return None
    z = _sigmoid_arg(model, inp.value)
    if z is None:
        return None
    edits = [NodeEdit("replace", inp.value, model.code_for(z))]
    if kind == "functional":
        if site.qual != "torch.nn.functional.binary_cross_entropy" or not isinstance(call.func, cst.Attribute):
            return None
        edits.append(NodeEdit("replace", call.func.attr, "binary_cross_entropy_with_logits"))
    elif kind == "inline":
        ctor = call.func
        if not isinstance(ctor.func, cst.Attribute) or ctor.func.attr.value != "BCELoss" or AF.has_star(ctor):
            return None
        edits.append(NodeEdit("replace", ctor.func.attr, "BCEWithLogitsLoss"))
    else:
        return None
    return FixPlan("safe", title, edits)
