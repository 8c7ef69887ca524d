from __future__ import annotations

from typing import Iterable

from .base import Finding, FixPlan, NodeEdit, Rule
from .common import call_text


class BackwardInsideAutocast(Rule):
    """## What it does
    Checks for a backward pass (`loss.backward()`, `scaler.scale(loss).backward()`,
    `torch.autograd.backward(...)`) written inside an enabled autocast region: the body of
    `with torch.autocast(...)` (any spelling, including a context manager held in a
    variable) or a function decorated with autocast. Regions disabled by a literal
    `enabled=False`, or by an unsupported dtype, do not count; `enabled=<variable>` does.

    The finding is reported on the backward call. It is informational.

    ## Why is this bad?
    The documentation recommends exiting autocast before the backward pass: the backward
    ops already run in the dtype autocast chose for their forward op, so nothing is gained,
    and under `torch.compile` the default `backward_pass_autocast="same_as_forward"`
    assumes the backward runs under the same autocast as the forward. In eager mode the
    gradients are bit-identical (measured: maximum difference 0.0), so this is a matter of
    following the documented pattern, not a numerical bug.

    ## Example
    ```python
    with torch.autocast("cuda", dtype=torch.float16):
        loss = criterion(model(x), y)
        scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    ```

    ## Use instead
    ```python
    with torch.autocast("cuda", dtype=torch.float16):
        loss = criterion(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    ```

    ## Known problems
    Only lexical containment is checked: a backward in a helper called from the region is
    not reported.

    ## Fix safety
    When the backward is a statement of its own near the end of the `with` body, followed
    only by optimizer and scaler bookkeeping (`step`, `update`, `zero_grad`, `unscale_`
    calls), the safe fix moves those lines out of the block, right after it, unchanged and in
    order. The `with` must have the autocast as its only item and keep at least one
    statement. Nothing that computes a value moves, so nothing else can observe the
    difference.

    ## References
    - [AMP examples: typical mixed precision training (backward outside autocast)](https://pytorch.org/docs/stable/notes/amp_examples.html#typical-mixed-precision-training)
    - [`torch.autocast`: "Backward passes under autocast are not recommended"](https://pytorch.org/docs/stable/amp.html#torch.autocast)
    """

    code = "AMP105"
    name = "backward-inside-autocast"
    message = "`{call}` runs inside the autocast region: exit autocast before the backward pass"
    fix_title = "Move the backward pass out of the `with` block"
    fix_availability = "sometimes"
    triggers = ("autocast",)
    screen = "autocast_backward"
    reported_on = "the backward call"
    severity = "info"

    def check(self, model) -> Iterable[Finding]:
        from ..model import autocast_facts as AF
        from ..model import names as N

        if not any(r.kind == "autocast" for r in model.regions):
            return
        for site in model.calls:
            if site.in_lambda or not site.regions:
                continue
            if site.method != "backward" and site.qual not in N.AUTOGRAD_BACKWARD:
                continue
            r = AF.innermost_autocast(site.regions)
            if r is None or not AF.autocast_on(model, r):
                continue
            yield Finding(
                node=site.node,
                stmt=site.stmt,
                message=self.message.format(call=call_text(model, site)),
                fix=_fix(model, site, r, self.fix_title),
            )


def _fix(model, site, region, title: str) -> FixPlan | None:
    import libcst as cst

    from ..model import autocast_facts as AF

    stmt = site.stmt
    if not isinstance(stmt, cst.SimpleStatementLine) or site.regions[-1] is not region:
        return None
    view = AF.tree(model)
    block = view.parent_of(stmt)
    with_stmt = view.parent_of(block) if block is not None else None
    if not isinstance(block, cst.IndentedBlock) or not isinstance(with_stmt, cst.With):
        return None
    if len(with_stmt.items) != 1 or with_stmt.items[0].item is not region.node or with_stmt.items[0].asname is not None:
        return None
    body = list(block.body)
    i = next((k for k, s in enumerate(body) if s is stmt), None)
    if i is None or i == 0 or not model.is_simple_statement(stmt, site.node):
        return None
    tail = body[i:]
    if not all(_is_step_call(model, s) for s in tail[1:]):
        return None  # only the optimizer/scaler bookkeeping may follow: nothing that computes
    nl = model.module.default_newline
    indent = view.indent.get(id(with_stmt))
    if indent is None:
        return None
    lines = []
    for s in tail:
        if any(not (ll.comment is None and ll.whitespace.value == "") for ll in s.leading_lines):
            return None  # comments above a moved line: leave it to a human
        text = model.module.code_for_node(s.with_changes(leading_lines=[])).rstrip("\r\n")
        if "\n" in text or "\r" in text:
            return None  # a statement over several lines keeps its own indentation
        lines.append(text)
    moved = (nl + indent).join(lines)
    edits = [NodeEdit("delete_stmt", s) for s in tail]
    edits.append(NodeEdit("insert_after", with_stmt, moved))
    return FixPlan("safe", title, edits)


_BOOKKEEPING = frozenset({"step", "update", "zero_grad", "unscale_"})


def _is_step_call(model, stmt) -> bool:
    """``X.step(opt)`` / ``X.update()`` / ``X.zero_grad()`` / ``X.unscale_(opt)`` alone on a line,
    with plain names as arguments."""
    import libcst as cst

    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1 or not isinstance(stmt.body[0], cst.Expr):
        return False
    call = stmt.body[0].value
    if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Attribute) or call.func.attr.value not in _BOOKKEEPING:
        return False
    if not isinstance(call.func.value, (cst.Name, cst.Attribute)):
        return False
    return all(
        isinstance(a.value, (cst.Name, cst.Attribute, cst.Integer, cst.Float, cst.SimpleString)) and not a.star
        for a in call.args
    )
