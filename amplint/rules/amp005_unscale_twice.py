from __future__ import annotations

from typing import Iterable

from . import edits
from .base import Finding, Rule
from .common import call_text, display_key, node_text


class UnscaleTwice(Rule):
    """## What it does
    Checks for `scaler.unscale_(optimizer)` on an optimizer that is already unscaled or already
    stepped since the last `scaler.update()`:

    - two `unscale_` calls on one optimizer in one iteration, also when one of them sits in a
      clipping helper of the same file;
    - `unscale_` on every gradient-accumulation micro-step while `step`/`update` only run at
      the accumulation boundary;
    - `unscale_` after `scaler.step(optimizer)` in the same iteration;
    - through accelerate: `accelerator.clip_grad_norm_` / `clip_grad_value_` /
      `unscale_gradients` (each calls the accelerator's `scaler.unscale_`) on every micro-step
      of `with accelerator.accumulate(model):`, with no `if accelerator.sync_gradients:` (or
      another boundary condition) around it. An accelerator this file builds with a literal
      `mixed_precision` other than `"fp16"`, or without gradient accumulation, is not reported.

    The finding is reported on the `unscale_` call that runs second. Calls in the exclusive
    arms of an `if`/`else` are fine.

    ## Why is this bad?
    `unscale_` divides the gradients by the scale once and records the optimizer as UNSCALED.
    GradScaler refuses a second division: `RuntimeError: unscale_() has already been called on
    this optimizer since the last update().` (on the second micro-step of an accumulation
    loop), or `RuntimeError: unscale_() is being called after step().`. With a disabled scaler
    (`enabled=False`, or a CUDA scaler on a CPU-only machine) the calls are no-ops, so CPU CI
    passes code that crashes on the GPU.

    ## Example
    ```python
    for i, (x, y) in enumerate(loader):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = criterion(model(x), y) / accum
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        if (i + 1) % accum == 0:
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
    ```

    ## Use instead
    ```python
    for i, (x, y) in enumerate(loader):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = criterion(model(x), y) / accum
        scaler.scale(loss).backward()
        if (i + 1) % accum == 0:
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
    ```

    ## Known problems
    Two `unscale_` calls under two different conditions that are never true together (say,
    `if clip_grad:` and `if log_grad_norm:` that a configuration keeps exclusive) are reported,
    because both can be true on one path. A helper of another module that unscales is not seen.
    Under accelerate, any condition around the clip that may stand for the accumulation
    boundary (`sync_gradients`, a `%`, a call, a name with `step`/`accum`/`sync`) is taken to be
    one, and a clip outside the `accumulate` block is not followed.

    ## Fix safety
    Deleting the second call is a safe fix when both are the same literal `S.unscale_(O)`
    statement in one straight-line block; otherwise where the single `unscale_` belongs (at the
    accumulation boundary, before the clip) needs a human and no fix is offered.

    ## References
    - [AMP examples: gradient accumulation](https://pytorch.org/docs/stable/notes/amp_examples.html#gradient-accumulation)
    - [`torch.amp.GradScaler.unscale_`](https://pytorch.org/docs/stable/amp.html#torch.amp.GradScaler.unscale_)
    - [accelerate: gradient accumulation](https://huggingface.co/docs/accelerate/usage_guides/gradient_accumulation)
    """

    code = "AMP005"
    name = "unscale-twice"
    message = "`{call}` {why}"
    fix_title = "Remove the duplicate `unscale_`"
    fix_availability = "sometimes"
    triggers = ("scaler", "accelerate_accumulate")
    reported_on = "the second `unscale_` call"

    def check(self, model) -> Iterable[Finding]:
        from ..model.accelerate import unscales_each_micro_step
        from ..model.flow.queries import unscale_after_unscale

        for site, block in unscales_each_micro_step(model):
            why = (f"unscales on every micro-step of `{call_text(model, block)}` but the scaler updates only "
                   f"when `{block.recv}.sync_gradients`: guard it with `if {block.recv}.sync_gradients:`")
            yield Finding(node=site.node, stmt=site.stmt, message=self.message.format(call=call_text(model, site), why=why))

        for obs, kind, prior in unscale_after_unscale(model):
            site = obs.site
            first = model.call_of.get(prior)
            if kind == "S":
                why = f"runs after `{node_text(model, prior)}` in the same iteration: unscale_ must come before step"
            elif prior is obs.node:
                why = (f"runs again before `{site.recv or display_key(obs.scaler)}.step()`/`update()` (once per loop "
                       "iteration, e.g. per accumulation micro-step): unscale_ once per optimizer step")
            else:
                where = f" in `{first.func.name}()`" if first is not None and first.func is not site.func else ""
                why = (f"unscales `{display_key(obs.opt)}` again after an earlier `{node_text(model, prior)}`{where} "
                       "with no `update()` in between")
            yield Finding(
                node=site.node,
                stmt=site.stmt,
                message=self.message.format(call=call_text(model, site), why=why),
                fix=edits.delete_duplicate(model, site, first, self.fix_title) if kind == "U" else None,
            )
