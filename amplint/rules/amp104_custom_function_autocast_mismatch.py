from __future__ import annotations

from typing import Iterable

from . import edits
from .base import Finding, Rule


class CustomFunctionAutocastMismatch(Rule):
    """## What it does
    Checks `torch.autograd.Function` subclasses (also through import aliases and base
    classes of the same file) where exactly one of `forward` / `backward` is decorated with
    `custom_fwd` / `custom_bwd`, in any spelling (`torch.amp.custom_fwd(device_type=...)`,
    the deprecated `torch.cuda.amp.custom_fwd`, from-imports).

    The finding is reported on the `class` line of the Function; the method that lacks its
    decorator is named in the message and given as a related location.

    ## Why is this bad?
    The two decorators work as a pair. `custom_fwd` records the autocast state of the
    forward pass on `ctx` and `custom_bwd` re-enters it for the backward pass.

    - `custom_fwd` without `custom_bwd`: the backward runs without the forward's autocast
      state and mixes float16 saved tensors with float32 gradients: `RuntimeError: expected
      m1 and m2 to have the same dtype, but got: c10::Half != float` (measured on CPU, under
      `torch.autocast("cpu", dtype=torch.float16)`).
    - `custom_bwd` without `custom_fwd`: `custom_bwd` reads `ctx._fwd_used_autocast`, which
      only `custom_fwd` sets, so every backward raises `AttributeError`, with or without
      autocast.

    ## Example
    ```python
    class Scale(torch.autograd.Function):
        @staticmethod
        @torch.amp.custom_fwd(device_type="cuda")
        def forward(ctx, x, w):
            ctx.save_for_backward(x, w)
            return x @ w

        @staticmethod
        def backward(ctx, g):
            x, w = ctx.saved_tensors
            return g @ w.t(), x.t() @ g
    ```

    ## Use instead
    ```python
    class Scale(torch.autograd.Function):
        @staticmethod
        @torch.amp.custom_fwd(device_type="cuda")
        def forward(ctx, x, w):
            ctx.save_for_backward(x, w)
            return x @ w

        @staticmethod
        @torch.amp.custom_bwd(device_type="cuda")
        def backward(ctx, g):
            x, w = ctx.saved_tensors
            return g @ w.t(), x.t() @ g
    ```

    ## Known problems
    A class whose `forward` or `backward` is inherited from a base class outside the file is
    not checked. A Function whose forward uses `cast_inputs=` records "autocast off", so its
    undecorated backward usually runs correctly outside autocast; it is still reported, as
    the documentation requires the pair. Functions with no decorator at all are not
    reported.

    ## Fix safety
    The safe fix adds the missing decorator right above the `def` (below `@staticmethod`),
    with the partner's `device_type`: spelled like the partner when that is the `torch.amp`
    API (`@custom_bwd(device_type=...)` when `custom_bwd` is imported too), else through the
    module, `@torch.amp.custom_bwd(device_type=...)`; next to a deprecated
    `torch.cuda.amp.custom_fwd` it adds `@torch.amp.custom_bwd(device_type="cuda")`, which
    pairs with it (the old decorator forwards to the new one), rather than another
    deprecated name. No fix is offered when the partner has no `device_type`, or when
    neither the counterpart nor `torch` is imported.

    ## References
    - [AMP examples: autocast and custom autograd functions](https://pytorch.org/docs/stable/notes/amp_examples.html#autocast-and-custom-autograd-functions)
    - [`torch.amp.custom_fwd` / `custom_bwd`](https://pytorch.org/docs/stable/amp.html#torch.amp.custom_fwd)
    """

    code = "AMP104"
    name = "custom-function-autocast-mismatch"
    message = "`{cls}.{method}` lacks `@{missing}` while `{partner}` is decorated with `@{present}`"
    fix_title = "Add `@{decorator}` to `{method}`"
    fix_availability = "sometimes"
    triggers = ("custom_fwd",)
    reported_on = ("the `def` line of the undecorated method, or the `class` line when that method is inherited "
                   "(the class and the decorated partner are related locations)")

    def check(self, model) -> Iterable[Finding]:
        from ..model.custom_functions import mismatched_custom_functions

        for cls, target, partner, missing, present, text in mismatched_custom_functions(model):
            fix = None
            if text is not None:
                fix = edits.insert_before(target.node, "@" + text,
                                          self.fix_title.format(decorator=text, method=target.name))
            # on the undecorated method; on the class when that method is inherited (the base's
            # undecorated method may be right for its other subclasses)
            yield Finding(
                node=target.node.name if target.cls is cls else cls.node.name,
                stmt=None,
                message=self.message.format(cls=cls.name, method=target.name, missing=missing,
                                            partner=partner.name, present=present),
                fix=fix,
                related=((cls.node.name, f"the Function `{cls.name}`"),
                         (partner.node.name, f"`{partner.name}` has `@{present}`")),
            )
