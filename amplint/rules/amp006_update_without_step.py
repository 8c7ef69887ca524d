from __future__ import annotations

from typing import Iterable

from ._sequence import display_key, enclosing_block, in_eval_code, is_scaler_call
from .base import Finding, FixPlan, NodeEdit, Rule
from .common import call_text, recv_text


class UpdateWithoutStep(Rule):
    """## What it does
    Checks for `scaler.update()` reachable on an iteration where neither `scaler.step(opt)` nor
    `scaler.unscale_(opt)` ran since the scaler was created or last updated. The typical case is
    gradient accumulation with the `update()` dedented out of the
    `if (i + 1) % accum == 0:` block that guards the step. An `update()` after an
    `optimizer.step()` that bypassed the scaler is left to AMP003, which reports the cause.

    The finding is reported on the `update()` call. Updates in evaluation code are left to
    AMP201 (scaler-in-eval).

    ## Why is this bad?
    `update()` consumes the inf checks recorded by `step`/`unscale_`. With none recorded it
    raises `AssertionError: No inf checks were recorded prior to update.`, here on the first
    micro-step that is not an accumulation boundary. With a disabled scaler (`enabled=False`,
    or a CUDA scaler on a CPU-only machine) `update()` does nothing, so the crash only shows on
    the GPU.

    ## Example
    ```python
    for i, (x, y) in enumerate(loader):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = criterion(model(x), y) / accum
        scaler.scale(loss).backward()
        if (i + 1) % accum == 0:
            scaler.step(optimizer)
            optimizer.zero_grad()
        scaler.update()
    ```

    ## Use instead
    ```python
    for i, (x, y) in enumerate(loader):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = criterion(model(x), y) / accum
        scaler.scale(loss).backward()
        if (i + 1) % accum == 0:
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
    ```

    ## Known problems
    A step and an update guarded by two different conditions that are always equal (say
    `if step_now:` and `if (i + 1) % accum == 0:`) are not seen as correlated, and the update
    is reported. Steps made by unknown code that receives the scaler make the scaler's state
    unknown, and nothing is reported. `update(new_scale=...)` (a manual cap or back-off) checks
    no inf flags and is never reported. An update after a `for` loop that steps is not
    reported for the case where that loop runs zero times (an empty loader).

    ## Fix safety
    When the `update()` directly follows an `if` block (without `else`) that steps through the
    scaler, an unsafe fix moves it to the end of that block. Moving a statement changes what runs
    on the other iterations, so it needs review.

    ## References
    - [AMP examples: gradient accumulation](https://pytorch.org/docs/stable/notes/amp_examples.html#gradient-accumulation)
    - [`torch.amp.GradScaler.update`](https://pytorch.org/docs/stable/amp.html#torch.amp.GradScaler.update)
    """

    code = "AMP006"
    name = "update-without-step"
    message = "`{call}` can run with no `{scaler}.step()` or `unscale_()` since the last update"
    fix_title = "Move `{call}` under the guard of `{scaler}.step()`"
    fix_availability = "sometimes"
    triggers = ("scaler",)
    reported_on = "the `update()` call"

    def check(self, model) -> Iterable[Finding]:
        seen: set[int] = set()
        for obs in model.observations("update"):
            site = obs.site
            if site is None or id(obs.node) in seen or in_eval_code(obs):
                continue
            if site.node.args:
                continue  # ``update(new_scale=...)`` sets the scale and checks nothing: never raises
            # after an ``optimizer.step()`` that bypassed the scaler AMP003 reports the cause
            if not any(st.all_ready(obs.scaler) and not st.speculative and not st.bypassed(obs.scaler)
                       for st in obs.states) and not _step_skipped_here(obs):
                continue
            seen.add(id(obs.node))
            call = call_text(model, site)
            scaler = recv_text(model, site) or display_key(obs.scaler)
            yield Finding(
                node=site.node,
                stmt=site.stmt,
                message=self.message.format(call=call, scaler=scaler),
                fix=_fix(model, site, self.fix_title.format(call=call, scaler=scaler)),
            )


def _step_skipped_here(obs) -> bool:
    """A function that does not know its scaler's state on entry (a wrapper's ``__call__``)
    but scales a backward, steps it on some paths, and reaches the update on another path with
    no step or ``unscale_`` since that backward: ``scale(loss).backward(); if update_grad:
    step(opt)`` followed by an unconditional ``update()``."""
    from ..model.flow import STEPPED

    s = obs.scaler
    stepped = skipped = False
    for st in obs.states:
        if st.speculative or st.bypassed(s) or s in st.lost:
            continue
        stages = st.stages(s)
        if any(kind == STEPPED for _o, kind, _n in stages):
            stepped = True
        elif not stages and s not in st.known and st.scaled_backwards(s):
            skipped = True
    return stepped and skipped


def _fix(model, site, title: str) -> FixPlan | None:
    """``if boundary: S.step(O)`` followed by ``S.update()``: move the update into the if."""
    import libcst as cst

    if not model.is_simple_statement(site.stmt, site.node):
        return None
    body, i = enclosing_block(model, site.func, site.stmt)
    if body is None or i < 1:
        return None
    guard = body[i - 1]
    if not isinstance(guard, cst.If) or guard.orelse is not None or not isinstance(guard.body, cst.IndentedBlock):
        return None
    inner = [c for c in site.func.calls if _within(model, c.stmt, guard)]
    if not any(c.method == "step" and c.recv == site.recv and is_scaler_call(model, c.node) for c in inner):
        return None
    if any(c.method == "update" and c.recv == site.recv for c in inner):
        return None
    last = guard.body.body[-1]
    if not isinstance(last, cst.SimpleStatementLine):
        return None
    for small in last.body:
        if isinstance(small, (cst.Return, cst.Raise, cst.Break, cst.Continue)):
            return None
    text = model.code_for(site.node)
    return FixPlan("unsafe", title, [NodeEdit("insert_after", last, text), NodeEdit("delete_stmt", site.stmt)])


def _within(model, stmt, compound) -> bool:
    """``stmt`` is one of the statements nested in ``compound``'s body."""
    stack = list(compound.body.body)
    while stack:
        s = stack.pop()
        if s is stmt:
            return True
        body = getattr(s, "body", None)
        if body is not None and hasattr(body, "body"):
            stack.extend(body.body)
        orelse = getattr(s, "orelse", None)
        if orelse is not None:
            stack.append(orelse)
    return False
