from __future__ import annotations

from typing import Iterable

from . import edits
from .common import related_at
from .base import Finding, Rule


class BceUnderAutocast(Rule):
    """## What it does
    Checks for `binary_cross_entropy` (`torch.nn.functional.binary_cross_entropy`,
    `torch.binary_cross_entropy`) and `nn.BCELoss` calls that run under an enabled CUDA
    autocast region: lexically inside `with torch.autocast("cuda", ...)` (or
    `torch.cuda.amp.autocast()`, or a device that is not a literal), in a function decorated
    with autocast (an autocast-decorated `forward`), in a helper of the same file called
    from such a region, or in the `forward` of a loss module called there (`criterion(p, y)`
    with `criterion = DiceBCELoss()`, `self.criterion = FocalBCE()`, `FocalBCE()(p, y)`, a
    combined loss holding one). A `BCELoss` call is a call of `nn.BCELoss()(p, y)`, or of a name
    or `self` attribute bound only to `nn.BCELoss(...)`.

    The finding is reported on the BCE call, also when it is in a loss function of another
    project module called under autocast (`from .losses import d_loss`), with that call as
    related location; when a loss module's class lives in another project module, on the call
    of the loss object, with the BCE as related location.

    A region with `enabled=<variable>` counts as enabled (the code is meant to run with
    autocast on); a nested `torch.autocast(..., enabled=False)`, an autocast region with the
    literal device `"cpu"`, and an unsupported dtype (autocast disabled) do not. The
    `_with_logits` variants are never reported.

    ## Why is this bad?
    CUDA autocast refuses these ops outright, whatever the inputs' dtype: `RuntimeError:
    torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast.`
    CPU autocast runs them in float32 without complaint, so a CPU-only test suite passes code
    that crashes on the first training step on a GPU.

    ## Example
    ```python
    with torch.autocast("cuda", dtype=torch.float16):
        logits = model(x)
        loss = F.binary_cross_entropy(torch.sigmoid(logits), y)
    ```

    ## Use instead
    ```python
    with torch.autocast("cuda", dtype=torch.float16):
        logits = model(x)
        loss = F.binary_cross_entropy_with_logits(logits, y)
    ```

    ## Known problems
    A loss module is recognised through the names and attributes bound to its constructor;
    one handed in as a parameter, built by a factory function or picked from a registry is not
    seen. A region whose device is a variable that is always
    `"cpu"` at run time is reported although CPU autocast accepts BCE. Other backends that
    ban BCE under autocast (besides CUDA) are not considered.

    ## Fix safety
    When the input is literally `torch.sigmoid(z)` or `z.sigmoid()`, the safe fix calls
    `binary_cross_entropy_with_logits(z, ...)` (or `nn.BCEWithLogitsLoss(...)(z, ...)` for an
    inline module), which is the same loss, computed more stably. Otherwise the
    probabilities must be traced back to logits by hand, or the loss computed in float32
    under `torch.autocast(..., enabled=False)`; no fix is offered.

    ## References
    - [Autocast op reference: ops that can autocast to float32 and prefer binary_cross_entropy_with_logits](https://pytorch.org/docs/stable/amp.html#prefer-binary-cross-entropy-with-logits-over-binary-cross-entropy)
    - [`torch.nn.BCEWithLogitsLoss`](https://pytorch.org/docs/stable/generated/torch.nn.BCEWithLogitsLoss.html)
    """

    code = "AMP103"
    name = "bce-under-autocast"
    message = "`{call}` under CUDA autocast raises RuntimeError: use `{instead}` on the logits"
    module_message = ("`{call}(...)` runs a loss module that computes a binary cross-entropy, which raises "
                      "RuntimeError under CUDA autocast: compute it with `F.binary_cross_entropy_with_logits` on "
                      "the logits, or outside autocast")
    fix_title = "Use `{instead}` on the logits and drop the sigmoid"
    fix_availability = "sometimes"
    triggers = ("autocast",)
    screen = "autocast_bce"
    runs_when_reached = True
    reported_on = "the BCE call"

    def check(self, model) -> Iterable[Finding]:
        from ..model.losses import (
            bce_calls_for_importers,
            bce_calls_under_autocast,
            callee_text,
            loss_modules_under_autocast,
        )

        for site, kind in bce_calls_under_autocast(model):
            instead = "F.binary_cross_entropy_with_logits" if kind == "functional" else "nn.BCEWithLogitsLoss"
            yield Finding(
                node=site.node,
                stmt=site.stmt,
                message=self.message.format(call=callee_text(model, site, kind), instead=instead),
                fix=edits.bce_with_logits(model, site, kind, self.fix_title.format(instead=instead)),
            )
        for site, kind, im, call in bce_calls_for_importers(model):
            instead = "F.binary_cross_entropy_with_logits" if kind == "functional" else "nn.BCEWithLogitsLoss"
            span = im.span(call.node) if im.path is not None else None
            yield Finding(
                node=site.node,
                stmt=site.stmt,
                message=self.message.format(call=callee_text(model, site, kind), instead=instead),
                fix=edits.bce_with_logits(model, site, kind, self.fix_title.format(instead=instead)),
                related=((str(im.path), span[0], span[1], "the call under autocast"),) if span else (),
            )
        for site, bce in loss_modules_under_autocast(model):
            yield Finding(
                node=site.node,
                stmt=site.stmt,
                message=self.module_message.format(call=model.code_for(site.node.func)),
                related=related_at(model, bce.node, "the binary cross-entropy it computes"),
            )
