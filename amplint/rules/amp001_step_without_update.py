from __future__ import annotations

from typing import Iterable

from .base import Finding, FixPlan, NodeEdit, Rule
from .common import call_text, dedupe, recv_text, sites_by_node


class StepWithoutUpdate(Rule):
    """## What it does
    Checks for a `scaler.step(optimizer)` from which some path reaches the next iteration of
    the training loop, or another `step` on the same optimizer, without `scaler.update()`.

    The finding is reported on the `step` call that is not followed by an `update()`.

    ## Why is this bad?
    `update()` is the only call that returns GradScaler's per-optimizer state to READY and
    adapts the loss scale. With one enabled scaler, the next iteration's `step` raises
    `RuntimeError: step() has already been called since the last update().` With a disabled
    scaler (`torch.amp.GradScaler()` on a machine without CUDA, or `enabled=False`) nothing
    happens, so CPU-only CI passes code that crashes on the GPU box. When the scaler or the
    optimizer is re-created every iteration, the scale never moves: after an overflowing
    initial scale every single step is skipped and the model learns nothing.

    The analysis follows branches, loops with their back edges, `continue`/`break`/`return`,
    `try`/`finally`, and helpers of the same file (a `step` in a helper whose caller calls
    `update()` after it is fine).

    ## Example
    ```python
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = criterion(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
    ```

    ## Use instead
    ```python
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = criterion(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    ```

    ## Known problems
    A scaler handed to code outside the file (a callback, a framework) may be updated
    there; amplint then draws no conclusion. A loop whose optimizer is rebuilt each iteration
    hides the step-after-step error at runtime; amplint still reports the step (the scale never
    adapts). A flag that records whether a step ran (`if stepped: scaler.update()` at the top
    of the loop) is not followed: the update looks optional.

    ## Fix safety
    An unsafe fix inserts `scaler.update()` right after the step when the step is the only one
    of its function and no `update()` of that scaler exists anywhere in the file: where the
    update belongs (after the last of several optimizers' steps, at the accumulation boundary,
    in a caller that already updates) needs a human.

    ## References
    - [Automatic Mixed Precision examples: typical mixed precision training](https://pytorch.org/docs/stable/notes/amp_examples.html)
    - [`torch.amp.GradScaler.update`](https://pytorch.org/docs/stable/amp.html#torch.amp.GradScaler.update)
    """

    code = "AMP001"
    name = "step-without-update"
    message = "`{step}` is not followed by `{scaler}.update()` before the next step"
    fix_title = "Call `{scaler}.update()` after the last `step` of the iteration"
    fix_availability = "sometimes"
    triggers = ("scaler",)
    reported_on = "the `scaler.step(...)` call"

    def check(self, model) -> Iterable[Finding]:
        from ..model.flow import STEPPED

        steps = set()
        for obs in model.observations("step"):
            for st in obs.states:
                hit = st.stage_of(obs.scaler, obs.opt)
                if hit is not None and hit[0] == STEPPED and hit[1] is not None:
                    steps.add(hit[1])
        # ``unscale_(opt)`` before the next step meets the stepped optimizer first (and raises
        # there). In the same iteration that is AMP005's unscale-after-step; across iterations
        # it is this step's missing update.
        for obs in model.observations("unscale"):
            for st in obs.states:
                hit = st.stage_of(obs.scaler, obs.opt)
                if hit is None or hit[0] != STEPPED or hit[1] is None:
                    continue
                it = st.iteration(obs.scaler)
                if it is None or obs.opt not in it[2]:
                    steps.add(hit[1])
        # A scaler built in this very iteration is rebuilt before its next step, so no second
        # step can meet the first one: its missing update shows at the loop's back edge (the
        # scale never adapts). Any other scaler's next step does meet it (above), and an update
        # made at the top of the next iteration, before that step, is not a finding.
        rebuilt = {obs.scaler for obs in model.observations("recreate")}
        for obs in model.observations("backedge") if rebuilt else ():
            for st in obs.states:
                fresh = {x[0] for x in st.fresh} & rebuilt
                for s, _o, kind, node in st.stage:
                    if kind == STEPPED and s in fresh:
                        steps.add(node)
        steps |= _never_updated(model)
        sites = sites_by_node(model)
        updated = {(c.recv or "").rsplit(".", 1)[-1] for c in model.calls if c.method == "update"}
        for node in dedupe(steps):
            site = sites.get(node)
            if site is None:
                continue
            scaler = recv_text(model, site)
            yield Finding(
                node=node,
                stmt=site.stmt,
                message=self.message.format(step=call_text(model, site), scaler=scaler),
                fix=_fix(model, site, scaler, self.fix_title.format(scaler=scaler), updated),
            )


def _never_updated(model) -> set:
    """Steps of a scaler that is never updated anywhere in the file and never leaves it.

    Covers loop-less training-step methods of a class that owns its scaler: nothing in the
    file can ever call ``update()`` on it.
    """
    out = set()
    updated_attrs = {c.recv.rsplit(".", 1)[-1] for c in model.calls if c.method == "update" and c.recv is not None}
    for site in model.calls:
        if site.method != "step" or site.recv is None or site.in_lambda:
            continue
        if not model.is_scaler(site.func, site.recv):
            continue
        last = site.recv.rsplit(".", 1)[-1]
        if last in updated_attrs:
            continue
        if not model.scalers.owned(site.func, site.recv):
            continue  # handed in (a parameter, an attribute set from one): others may update it
        if model.scalers.escapes(site.recv):
            continue
        out.add(site.node)
    return out


def _fix(model, site, scaler: str, title: str, updated: set[str]) -> FixPlan | None:
    """Insert ``S.update()`` after the step when it is the function's only step and no update exists."""
    func = site.func
    same = [c for c in func.calls if c.method in ("step", "update") and c.recv == site.recv]
    if len(same) != 1 or site.stmt is None or not model.is_simple_statement(site.stmt, site.node):
        return None
    last = (site.recv or "").rsplit(".", 1)[-1]
    if last in updated:
        return None  # updated elsewhere (a caller, another method): where it belongs needs a human
    return FixPlan("unsafe", title, [NodeEdit("insert_after", site.stmt, f"{scaler}.update()")])
