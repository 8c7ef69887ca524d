from __future__ import annotations

from typing import Iterable

from .base import Finding, Rule
from .common import call_text


class Fp16BackwardWithoutScaler(Rule):
    """## What it does
    Checks for a backward pass of a loss computed under float16 autocast, in a file that has
    no GradScaler at all. The loss counts as float16 when it (or a value it is computed
    from, in the same function) is assigned inside an autocast region whose dtype is
    literally `torch.float16` / `torch.half`, or whose device is `"cuda"` with no dtype
    (CUDA's default is float16, also for `torch.cuda.amp.autocast()`).

    In a file that does have a GradScaler, the same is reported for a plain backward on the
    paths without it: the arm of `if scaler is not None:` / `if args.fp16:` that does not use
    the scaler (or a loss scaled only sometimes, `if scaler: loss = scaler.scale(loss)`), when
    the loss comes from a float16 autocast that stays on there: one without `enabled=`, or whose
    `enabled=` flag the path assumes true. A helper's parameter counts through this file's
    calls that pass it a float16 loss.

    The finding is reported on the `backward()` call.

    Not reported: bfloat16 regions, CPU autocast without a dtype (bfloat16), regions
    disabled by a literal `enabled=False`, regions whose `enabled=` or `dtype=` is a
    variable (`enabled=use_amp`: amplint cannot tell which configuration runs), inference
    code (no backward), and files with any GradScaler or scaler-like name (a scaler that is
    bypassed is AMP004's business), except on the paths without it described above. On those,
    also not reported: an autocast that is itself conditional (`autocast(...) if amp else
    nullcontext()`) or switched by a flag the path does not decide, paths chosen by the device
    (`if device.type == "cuda"`: without CUDA, `autocast("cuda")` is off), tensors another loss
    scaler produced (`with amp.scale_loss(loss, opt) as scaled_loss`), and arms that cannot run
    (`else` of `if scaler is not None` after `scaler = GradScaler()`).

    ## Why is this bad?
    Gradients smaller than float16's smallest subnormal (about 6e-8) flush to zero and
    those below 6.1e-5 lose precision; the GradScaler exists to multiply the loss so that
    they survive. Without it, small losses train silently worse: with the loss multiplied
    by 1e-6, 98% of the weight-gradient entries that are non-zero in float32 were exactly
    zero in float16, and Adam ended at a loss of 0.686 against 0.082 with a scaler (probe e,
    CPU). bfloat16 has float32's exponent range and needs no scaler.

    ## Example
    ```python
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
    ```

    ## Use instead
    ```python
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = criterion(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    ```

    ## Known problems
    A scaler that lives in another module (a trainer that owns it) is not seen, and neither
    is a loss computed by a helper or by a model whose `forward` is autocast-decorated. A
    library function whose scaler is an optional parameter (`scaler=None`) with the autocast
    always on is reported: its callers may leave the scaler out. Code
    that deliberately trains in float16 without scaling (a loss that is known to be large)
    can suppress the finding with `# noqa: AMP106`.

    ## Fix safety
    No fix: adding a GradScaler changes the training step in several places (scale,
    step, update, checkpointing), and using bfloat16 instead depends on the hardware.

    ## References
    - [AMP examples: gradient scaling](https://pytorch.org/docs/stable/amp.html#gradient-scaling)
    - [`torch.amp.GradScaler`](https://pytorch.org/docs/stable/amp.html#torch.amp.GradScaler)
    """

    code = "AMP106"
    name = "fp16-backward-without-scaler"
    message = "`{call}` back-propagates a float16 autocast loss without a GradScaler: small gradients underflow to zero"
    UNSCALED_PATH = ("`{call}` back-propagates a float16 autocast loss unscaled on the paths without the "
                     "GradScaler, but the autocast stays on there: small gradients underflow to zero")
    fix_title = None
    fix_availability = "none"
    triggers = ("autocast",)
    screen = "autocast_backward"
    reported_on = "the `backward()` call"

    def check(self, model) -> Iterable[Finding]:
        from ..model.flow.dtype_queries import fp16_backwards_on_unscaled_paths

        for site in model.dtypes.fp16_backwards_without_scaler():
            yield Finding(node=site.node, stmt=site.stmt, message=self.message.format(call=call_text(model, site)))
        if model.scalers.any():
            for site, _region in fp16_backwards_on_unscaled_paths(model):
                yield Finding(node=site.node, stmt=site.stmt, message=self.UNSCALED_PATH.format(call=call_text(model, site)))
