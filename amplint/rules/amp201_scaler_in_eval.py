from __future__ import annotations

from typing import Iterable

from .base import Finding, FixPlan, NodeEdit, Rule
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
    statement in evaluation code is offered as an unsafe fix.

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
        seen = set()
        for obs in model.observations("scale", "unscale", "step", "update"):
            if obs.site is None or obs.node in seen:
                continue
            where = _where(obs)
            if where is None:
                continue
            seen.add(obs.node)
            site = obs.site
            scaler = recv_text(model, site)
            call = f"{scaler}.{_METHODS[obs.kind]}()"
            yield Finding(
                node=site.node,
                stmt=site.stmt,
                message=self.message.format(call=call, where=where),
                fix=_fix(model, site, obs.kind),
            )


def _where(obs) -> str | None:
    r = obs.grad_disabled
    if r is not None and (obs.kind == "scale" or _no_backward_before(obs)):
        return "gradients are disabled here"
    for r in reversed(obs.regions):
        if r.kind == "eval" and not r.has_backward:
            target = f"`{r.target}`" if r.target else "the model"
            return f"after {target}.eval() with no backward"
        if r.kind == "eval_name" and not r.has_backward:
            return "an evaluation function with no backward"
    return None


def _no_backward_before(obs) -> bool:
    """``unscale_`` / ``step`` / ``update`` under ``no_grad`` are evaluation code only when no
    scaled backward precedes them: an optimizer step decorated ``@torch.no_grad()`` right after
    the backward is a training step (it trains normally). Only known states count."""
    s = obs.scaler
    for st in obs.states:
        if s not in st.known and not st.stages(s):
            continue  # nothing known about this scaler on this path
        if obs.kind == "update":
            if st.all_ready(s):
                return True
        else:
            grads = st.grads_of(s)
            if not st.scaled_backwards(s) and (grads is None or grads[0] == "clean"):
                return True
    return False


def _fix(model, site, kind: str) -> FixPlan | None:
    if kind == "scale":
        parent = model.parent_call_of(site.node)
        arg = site.arg(0, "outputs")
        if arg is None:
            return None
        inner = model.code_for(arg.value)
        # ``S.scale(x).item()`` -> ``x.item()``; ``float(S.scale(x))`` -> ``float(x)``
        if parent is not None and parent.method == "item" and parent.recv_node is site.node:
            return FixPlan("safe", "Report the unscaled value", [NodeEdit("replace", site.node, _paren(arg.value, inner))])
        if parent is not None and parent.text == "float" and len(parent.node.args) == 1 and parent.node.args[0].value is site.node:
            return FixPlan("safe", "Report the unscaled value", [NodeEdit("replace", site.node, inner)])
        return None
    if kind in ("update", "step") and model.is_simple_statement(site.stmt, site.node):
        return FixPlan("unsafe", f"Delete the `{kind}()` call", [NodeEdit("delete_stmt", site.stmt)])
    return None


def _paren(node, text: str) -> str:
    import libcst as cst

    simple = (cst.Name, cst.Attribute, cst.Call, cst.Subscript)
    return text if isinstance(node, simple) else f"({text})"
