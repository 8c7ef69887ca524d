from __future__ import annotations

from typing import Iterable

from ._sequence import display_key, enclosing_block, in_eval_code
from .base import Finding, FixPlan, NodeEdit, Rule
from .common import call_text, recv_text


class UpdatePerOptimizer(Rule):
    """## What it does
    Checks for more than one `scaler.update()` in one iteration of the training loop with
    steps of different optimizers in between:
    `scaler.step(opt_d); scaler.update(); ...; scaler.step(opt_g); scaler.update()`.

    The finding is reported on the second `update()` of the iteration.

    ## Why is this bad?
    One scaler serves all the optimizers of an iteration, and `update()` must run once, after
    the last `step`. Each `update()` advances the growth tracker, so two per iteration double the
    growth rate of the loss scale, and the backoff reacts to each optimizer's infinities
    separately. Nothing fails: measured with `growth_interval=10` over 60 iterations, the scale
    reached 65536 instead of 1024, which means more overflowing (skipped) steps later on.

    ## Example
    ```python
    scaler.scale(loss_d).backward()
    scaler.step(opt_d)
    scaler.update()
    scaler.scale(loss_g).backward()
    scaler.step(opt_g)
    scaler.update()
    ```

    ## Use instead
    ```python
    scaler.scale(loss_d).backward()
    scaler.step(opt_d)
    scaler.scale(loss_g).backward()
    scaler.step(opt_g)
    scaler.update()
    ```

    ## Known problems
    Updates made in different iterations of an inner loop (several critic steps per generator
    step) are separate iterations and are not reported. Two scalers, one per optimizer, are
    fine and not reported.

    ## Fix safety
    When the function has exactly two `update()` statements of this scaler in one straight-line
    block, an unsafe fix deletes the first: both steps then share the single update at the end.
    It is unsafe because the second loss is then scaled with the scale of before the first
    step.

    ## References
    - [AMP examples: working with multiple models, losses, and optimizers](https://pytorch.org/docs/stable/notes/amp_examples.html#working-with-multiple-models-losses-and-optimizers)
    """

    code = "AMP007"
    name = "update-per-optimizer"
    message = "`{call}` is the second update of this iteration (after stepping `{opt}`): step every optimizer, then update once"
    fix_title = "Delete the first `{scaler}.update()` of the iteration"
    fix_availability = "sometimes"
    triggers = ("scaler",)
    reported_on = "the second `update()` of the iteration"

    def check(self, model) -> Iterable[Finding]:
        seen: set[int] = set()
        for obs in model.observations("update"):
            site = obs.site
            if site is None or id(obs.node) in seen or in_eval_code(obs):
                continue
            opts = None
            for st in obs.states:
                it = st.iteration(obs.scaler)
                if it is None or st.speculative:
                    continue
                n, prev, cur = it
                if n >= 1 and prev and cur - prev:
                    opts = sorted(cur - prev)
                    break
            if opts is None:
                continue
            seen.add(id(obs.node))
            scaler = recv_text(model, site) or display_key(obs.scaler)
            yield Finding(
                node=site.node,
                stmt=site.stmt,
                message=self.message.format(call=call_text(model, site), opt=display_key(opts[0])),
                fix=_fix(model, site, self.fix_title.format(scaler=scaler)),
            )


def _fix(model, site, title: str) -> FixPlan | None:
    import libcst as cst

    updates = [c for c in site.func.calls if c.method == "update" and c.recv == site.recv]
    if len(updates) != 2 or updates[1] is not site:
        return None
    first = updates[0]
    if not model.is_simple_statement(first.stmt, first.node) or not model.is_simple_statement(site.stmt, site.node):
        return None
    body, i = enclosing_block(model, site.func, site.stmt)
    if body is None or first.stmt not in body:
        return None
    j = body.index(first.stmt)
    for s in body[j:i]:
        if isinstance(s, cst.With):
            s = s.body
            if not all(isinstance(x, cst.SimpleStatementLine) for x in getattr(s, "body", ())):
                return None
            continue
        if not isinstance(s, cst.SimpleStatementLine):
            return None
        if any(isinstance(x, (cst.Return, cst.Raise, cst.Break, cst.Continue)) for x in s.body):
            return None
    return FixPlan("unsafe", title, [NodeEdit("delete_stmt", first.stmt)])
