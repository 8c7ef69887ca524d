from __future__ import annotations

from typing import Iterable

from . import edits
from .base import Finding, Rule


class ScalerStateNotCheckpointed(Rule):
    """## What it does
    Checks for a training checkpoint that leaves out the GradScaler's state, in a module that
    trains with an enabled GradScaler and never saves or loads `scaler.state_dict()`.

    A training checkpoint is a `torch.save` of a dict that holds optimizer state (an
    `"optimizer"` key, or `optimizer.state_dict()`), whether the dict is written inline,
    built in a variable first (with keys added by subscript), returned by a helper of the
    same file, or passed to a helper of the same file that saves it. A dataclass or NamedTuple
    of the file (`Snapshot(model_state=..., optimizer_state=...)`) saved as such or through
    `asdict(...)` / `._asdict()` / `vars(...)` counts as that dict, its fields as its keys (a
    field named for the scaler counts as its state). A method named like
    `get_checkpoint_state` that returns such a dict to a checkpointer counts as well, and so
    does the optimizer's state saved in a file of its own (`torch.save(optimizer.state_dict(),
    "optimizer.pt")`, with no `scaler.pt` beside it).

    The finding is reported on the save call (`torch.save(...)`, or the call of the helper
    that saves the dict); for a checkpoint-state method, on the dict it returns.

    ## Why is this bad?
    The loss scale is learnt: it starts at `init_scale` (65536 by default), backs off on every
    overflow and grows slowly. A resumed run without the scaler state starts from scratch and
    re-calibrates, skipping steps on the way (measured: 6 extra skipped steps in the first 30
    after a resume, none when the scaler state was restored); with a large `init_scale` it is
    one skipped step per halving. The PyTorch recipe saves `scaler.state_dict()` next to the
    model and optimizer and loads it on resume.

    ## Example
    ```python
    torch.save(
        {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch},
        "last.pt",
    )
    ```

    ## Use instead
    ```python
    torch.save(
        {
            "model": model.state_dict(),
            "optimizer": optimizer.state_dict(),
            "scaler": scaler.state_dict(),
            "epoch": epoch,
        },
        "last.pt",
    )
    # on resume: scaler.load_state_dict(checkpoint["scaler"])
    ```

    ## Known problems
    The module is judged as a whole: a `scaler.load_state_dict()`, a `scaler.state_dict()`
    outside the checkpoint dicts themselves, or a scaler handed to a function named like a
    saver (`save_checkpoint(..., scaler)`) silences the rule for the file. A checkpoint dict
    that includes the scaler does not excuse another one that leaves it out. Saves of model weights alone (`torch.save(model.state_dict(), p)`)
    are exports, not training checkpoints, and are not reported. Checkpoints written by
    framework objects (Lightning, Accelerate, MMEngine) are out of reach and not needed:
    those save the scaler themselves. A scaler with `enabled=False` is not reported.

    ## Fix safety
    When the checkpoint is a dict literal (or `dict(...)` call) and a scaler that is never
    `None` is in scope, the fix adds `"scaler": <scaler>.state_dict()` to it. It is safe:
    loaders read the keys they know and ignore the new one. Loading it back on resume needs a
    human.

    ## References
    - [AMP examples: saving and resuming](https://pytorch.org/docs/stable/notes/amp_examples.html#saving-resuming)
    - [`torch.amp.GradScaler.state_dict`](https://pytorch.org/docs/stable/amp.html#torch.amp.GradScaler.state_dict)
    """

    code = "AMP013"
    name = "scaler-state-not-checkpointed"
    message = "Training checkpoint without the GradScaler state: save `{scaler}.state_dict()` and load it on resume"
    fix_title = "Add `\"scaler\": {scaler}.state_dict()` to the checkpoint"
    fix_availability = "sometimes"
    triggers = ("scaler",)
    severity = "info"
    reported_on = "the `torch.save(...)` (or saving helper) call"

    def check(self, model) -> Iterable[Finding]:
        from ..model.checkpoints import checkpoints_without_scaler

        for report, cand in checkpoints_without_scaler(model):
            scaler, never_none = _scaler_in_scope(model, cand.func)
            fix = edits.add_scaler_state(model, cand.node, scaler, self.fix_title) if scaler and never_none else None
            message = self.message.format(scaler=scaler or "scaler")
            node, stmt = (report.node, report.stmt) if report is not None else (cand.node, cand.stmt)
            yield Finding(node=node, stmt=stmt, message=message, fix=fix)


def _scaler_in_scope(model, func) -> tuple[str | None, bool]:
    """The one scaler reachable from ``func`` (as source text), and whether it is never ``None``."""
    from ..model.scalers import owner_class
    from ..model.usage import always_ctor

    cls = owner_class(func)
    candidates: list[str] = []
    if cls is not None:
        c = cls
        while c is not None:
            candidates.extend(k for k in model.scalers.class_attrs.get(c, ()) if k.startswith("self."))
            c = model.scalers._base(c)
    candidates.extend(k for k in model.scalers.local_keys.get(func, ()) if k not in func.params)
    if not func.is_module and not candidates:
        candidates.extend(k for k in model.scalers.module_keys if "." not in k and not func.is_local(k))
    candidates = sorted(set(candidates))
    if len(candidates) != 1:
        return None, False
    key = candidates[0]
    binds = [a for a in model.assignments if key in a.targets and (owner_class(a.func) is cls if key.startswith("self.") else True)]
    if not key.startswith("self."):
        binds = [a for a in binds if a.func is func or a.func.is_module]
    return key, bool(binds) and all(always_ctor(model, a.value) for a in binds)
