from __future__ import annotations

from typing import Iterable

from .. import torch_api as T
from . import edits
from .base import Finding, Rule



class FsdpNeedsShardedScaler(Rule):
    """## What it does
    Checks for a module that wraps models with FSDP (`FullyShardedDataParallel(...)`) and
    creates a plain `torch.amp.GradScaler` (or the deprecated `torch.cuda.amp.GradScaler`)
    instead of FSDP's `ShardedGradScaler`. A module that creates a `ShardedGradScaler`
    anywhere (choosing per strategy) is not reported, nor FSDP2 (`fully_shard(...)`): its
    gradients are DTensors, and recent PyTorch versions teach the plain GradScaler to reduce
    their inf checks across ranks (pytorch/pytorch#132816), which is what torchtitan uses.

    The finding is reported on the `GradScaler(...)` constructor call. Off by default.

    ## Why is this bad?
    With FSDP every rank holds a shard of the gradients. The plain GradScaler checks only the
    local shard for infinities, so one rank may skip a step that the others take, and it does
    not handle gradients offloaded to the CPU. `ShardedGradScaler` reduces the inf flag across
    ranks (and accepts fp16 and CPU-offloaded gradients), so every rank makes the same
    decision. This needs several processes to show and was not measured here.

    ## Example
    ```python
    model = FullyShardedDataParallel(model)
    scaler = torch.amp.GradScaler("cuda")
    ```

    ## Use instead
    ```python
    from torch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler

    model = FullyShardedDataParallel(model)
    scaler = ShardedGradScaler("cuda")
    ```

    ## Known problems
    The check is per module: an FSDP wrap in one module and a scaler in another are not
    connected, and a module that uses FSDP only on some code paths is reported all the same.
    A module that wraps with both FSDP1 and FSDP2 is judged by its FSDP1 calls.

    ## Fix safety
    The constructor swap (plus the import) is a safe fix when the arguments mean the same to
    both classes: a device and an initial scale, and keywords. `ShardedGradScaler` orders
    `backoff_factor` before `growth_factor`, so further positional arguments get no fix. A
    module with several plain constructors gets no fix: once one is swapped, the module would
    look like one that picks its scaler per strategy, and the others would go unreported.

    ## References
    - [`torch.distributed.fsdp.sharded_grad_scaler.ShardedGradScaler`](https://github.com/pytorch/pytorch/blob/main/torch/distributed/fsdp/sharded_grad_scaler.py)
    - [FSDP documentation](https://pytorch.org/docs/stable/fsdp.html)
    - [Gradient scaler for DTensor (FSDP2), pytorch/pytorch#132816](https://github.com/pytorch/pytorch/pull/132816)
    """

    code = "AMP902"
    name = "fsdp-needs-sharded-scaler"
    message = "`{ctor}` in a module that shards models with FSDP: use `ShardedGradScaler`"
    fix_title = "Use `ShardedGradScaler`"
    fix_availability = "sometimes"
    default_enabled = False
    triggers = ("grad_scaler_name",)
    reported_on = "the `GradScaler(...)` constructor call"

    def check(self, model) -> Iterable[Finding]:
        from ..model.usage import facts

        ctors = facts(model).ctors
        if not ctors or any(c.is_sharded for c in ctors):
            return
        if not any(c.qual in T.FSDP1 for c in model.calls):
            return
        plain = [c for c in ctors if c.family in ("device_first", "init_scale_first")]
        for c in plain:
            head = model.code_for(c.site.node.func)
            yield Finding(
                node=c.site.node,
                stmt=c.site.stmt,
                message=self.message.format(ctor=head),
                # with several constructors, one ShardedGradScaler would make the module look
                # like it chooses per strategy and silence the others: no fix then
                fix=edits.sharded_scaler(model, c, self.fix_title) if len(plain) == 1 else None,
            )
