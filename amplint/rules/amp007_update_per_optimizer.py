from __future__ import annotations

from typing import Iterable

from . import edits
from .base import Finding, Rule
from .common import call_text, display_key, recv_text, related_at


class UpdatePerOptimizer(Rule):
    """## What it does
    Checks for more than one `scaler.update()` in one iteration of the training loop with
    steps of different optimizers in between:
    `scaler.step(opt_d); scaler.update(); ...; scaler.step(opt_g); scaler.update()`.

    Both updates are reported: the first `update()` of the iteration, the one that comes before
    another optimizer's step (where the fix deletes), and the second; each names the other as a
    related location. The updates may
    sit in different methods of a class (`discriminator_step`, `generator_step`). Loops inside the
    iteration that step nothing (`for p in d.parameters(): p.requires_grad = True`) do not
    start a new iteration.

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
    message = ("`{call}` updates before `{opt}` is stepped, and the same iteration updates again: step every "
               "optimizer, then update once")
    second_message = "`{call}` is the second update of this iteration (after stepping `{opt}`): step every optimizer, then update once"
    fix_title = "Delete this `{scaler}.update()`: one update after the iteration's last step"
    fix_availability = "sometimes"
    triggers = ("scaler",)
    reported_on = "both `update()` calls of the iteration: the first (before another optimizer's step) and the second"

    def check(self, model) -> Iterable[Finding]:
        from ..model.flow.queries import second_updates

        seconds = set()
        for node, opts, later in second_updates(model):
            opt = display_key(opts[0])
            site = model.call_of.get(node)
            if site is not None:  # (an early update of another module is reported there)
                scaler = recv_text(model, site) or display_key(later.scaler)
                yield Finding(
                    node=site.node,
                    stmt=site.stmt,
                    message=self.message.format(call=call_text(model, site), opt=opt),
                    fix=edits.delete_first_update(model, site, later.site, self.fix_title.format(scaler=scaler)),
                    related=related_at(model, later.node, "the later update"),
                )
            if later.node is not node and id(later.node) not in seconds and model.owns(later.node):
                seconds.add(id(later.node))
                yield Finding(node=later.node, stmt=later.site.stmt,
                              message=self.second_message.format(call=call_text(model, later.site), opt=opt),
                              related=related_at(model, node, "the earlier update"))
