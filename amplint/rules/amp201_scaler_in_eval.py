from __future__ import annotations

from typing import Iterable

from . import edits
from .base import Finding, Rule
from .common import recv_text

_METHODS = {"scale": "scale", "unscale": "unscale_", "step": "step", "update": "update"}


class ScalerInEval(Rule):
    """## What it does
    Checks for GradScaler calls (`scale`, `unscale_`, `step`, `update`) in evaluation code:

    - in a grad-disabled region: the body of `with torch.no_grad()`, `torch.inference_mode()`
      or `torch.set_grad_enabled(False)` (also after a bare `torch.set_grad_enabled(False)`
      in the same block), or a function decorated with `@torch.no_grad()` /
      `@torch.inference_mode()`, also through helpers called there: `scale()` always, and
      `unscale_` / `step` / `update` when no scaled backward precedes them (an optimizer step
      decorated `@torch.no_grad()` after the backward is a training step);
    - in an eval-mode region (after `model.eval()` and before `model.train()` in the same
      block) or an evaluation function (named like `validate`, `evaluate`, `eval_*`, `val_*`;
      see the `eval-function-patterns` option), when that region runs no backward.

    The finding is reported on the scaler call.

    ## Why is this bad?
    Evaluation produces no gradients, so the scaler has nothing to do there, and each call
    misbehaves in its own way: `scaler.scale(val_loss).item()` reports a metric inflated
    exactly by the scale (4096x measured) that drifts as the scale changes; `update()` raises
    `AssertionError: No inf checks were recorded prior to update.`; `step(optimizer)` silently
    re-applies the last training step's stale gradients (with Adam the validation loss drifted
    2.30 -> 3.03 over five evaluations); `scale(loss).backward()` under `no_grad` raises.

    ## Example
    ```python
    model.eval()
    with torch.no_grad():
        for x, y in val_loader:
            with torch.autocast("cuda", dtype=torch.float16):
                val_loss = criterion(model(x), y)
            total += scaler.scale(val_loss).item()
    ```

    ## Use instead
    ```python
    model.eval()
    with torch.no_grad():
        for x, y in val_loader:
            with torch.autocast("cuda", dtype=torch.float16):
                val_loss = criterion(model(x), y)
            total += val_loss.item()
    ```

    ## Known problems
    A function that puts a sub-module in eval mode and still trains (a frozen backbone with
    batch-norm statistics fixed) runs a backward in the region and is not reported. A scaler
    that reaches evaluation code only through another module is not seen.

    ## Fix safety
    `scaler.scale(x).item()` and `float(scaler.scale(x))` become `x.item()` and `float(x)`:
    a safe fix, the value no longer carries the scale. Deleting an `update()` or `step()`
    statement in evaluation code is offered as an unsafe fix (an `update()` only where its
    function does not also call `step()`: deleted alone, it would leave that step without an
    update).

    ## References
    - [AMP recipe: inference/evaluation needs autocast only](https://pytorch.org/docs/stable/amp.html)
    - [`torch.no_grad`](https://pytorch.org/docs/stable/generated/torch.no_grad.html)
    """

    code = "AMP201"
    name = "scaler-in-eval"
    message = "`{call}` in evaluation code ({where}): GradScaler has no place outside the training step"
    fix_title = "Remove the scaler from evaluation code"
    fix_availability = "sometimes"
    triggers = ("scaler",)
    reported_on = "the scaler call"

    def check(self, model) -> Iterable[Finding]:
        from ..model.flow.queries import scaler_calls_in_eval

        for obs, where in scaler_calls_in_eval(model):
            site = obs.site
            call = f"{recv_text(model, site)}.{_METHODS[obs.kind]}()"
            if obs.kind == "scale":
                fix = edits.unscaled_metric(model, site)
            elif obs.kind in ("update", "step") and edits.is_simple_statement(site.stmt, site.node) and not (
                    obs.kind == "update" and any(c.method == "step" and c.recv == site.recv for c in site.func.calls)):
                # (an update whose function also steps stays: alone, its deletion orphans the step)
                fix = edits.delete_line(site.stmt, f"Delete the `{obs.kind}()` call")
            else:
                fix = None
            yield Finding(node=site.node, stmt=site.stmt, message=self.message.format(call=call, where=where), fix=fix)
