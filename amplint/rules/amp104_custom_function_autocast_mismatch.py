from __future__ import annotations

from typing import Iterable

from .base import Finding, FixPlan, NodeEdit, Rule


class CustomFunctionAutocastMismatch(Rule):
    """## What it does
    Checks `torch.autograd.Function` subclasses (also through import aliases and base
    classes of the same file) where exactly one of `forward` / `backward` is decorated with
    `custom_fwd` / `custom_bwd`, in any spelling (`torch.amp.custom_fwd(device_type=...)`,
    the deprecated `torch.cuda.amp.custom_fwd`, from-imports).

    The finding is reported on the `def` line of the method that lacks its decorator.

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
    reported_on = "the `def` line of the undecorated method"

    def check(self, model) -> Iterable[Finding]:
        seen: set[int] = set()
        for cls in _functions(model):
            fwd = _method(model, cls, "forward")
            bwd = _method(model, cls, "backward")
            if fwd is None or bwd is None:
                continue
            f_dec = _decorator(model, fwd, "custom_fwd")
            b_dec = _decorator(model, bwd, "custom_bwd")
            if (f_dec is None) == (b_dec is None):
                continue
            if f_dec is not None:
                target, partner, missing, present = bwd, fwd, "custom_bwd", "custom_fwd"
                dec = f_dec
            else:
                target, partner, missing, present = fwd, bwd, "custom_fwd", "custom_bwd"
                dec = b_dec
            if target.cls is not cls and partner.cls is not cls:
                continue  # both inherited: reported on the base class
            if id(target.node) in seen:
                continue
            seen.add(id(target.node))
            text = _missing_text(model, dec, missing)
            fix = None
            if text is not None:
                fix = FixPlan("safe", self.fix_title.format(decorator=text, method=target.name),
                              [NodeEdit("insert_before", target.node, "@" + text)])
            yield Finding(
                node=target.node.name,
                stmt=None,
                message=self.message.format(cls=cls.name, method=target.name, missing=missing,
                                            partner=partner.name, present=present),
                fix=fix,
            )


def _functions(model) -> list:
    """Classes deriving from torch.autograd.Function, directly or through classes of this file."""
    from ..model import names as N

    by_name = {c.name: c for c in model.classes}
    found: list = []
    changed = True
    seen: set[int] = set()
    while changed:
        changed = False
        for c in model.classes:
            if id(c) in seen:
                continue
            if any(q in N.AUTOGRAD_FUNCTION for q in c.base_quals) or any(
                b in by_name and id(by_name[b]) in seen for b in c.bases
            ):
                seen.add(id(c))
                found.append(c)
                changed = True
    return found


def _method(model, cls, name: str):
    by_name = {c.name: c for c in model.classes}
    c = cls
    visited: set[int] = set()
    while c is not None and id(c) not in visited:
        visited.add(id(c))
        m = c.methods.get(name)
        if m is not None:
            return m
        c = next((by_name[b] for b in c.bases if b in by_name), None)
    return None


def _decorator(model, func, kind: str):
    """The ``custom_fwd`` / ``custom_bwd`` decorator of ``func`` (any spelling), or None."""
    import libcst as cst

    from ..model import names as N

    wanted = N.CUSTOM_FWD if kind == "custom_fwd" else N.CUSTOM_BWD
    for d in func.node.decorators:
        e = d.decorator
        callee = e.func if isinstance(e, cst.Call) else e
        if not isinstance(callee, (cst.Name, cst.Attribute)):
            continue
        q = model.imports.qualify(callee)
        text = N.dotted_text(callee) or ""
        if q in wanted or text.rsplit(".", 1)[-1] == kind or (q or "").rsplit(".", 1)[-1] == kind:
            return d
    return None


def _missing_text(model, dec, missing: str) -> str | None:
    """The partner decorator: spelled like ``dec`` when ``dec`` is the ``torch.amp`` API,
    else ``torch.amp.<missing>(device_type=...)`` (never a deprecated spelling)."""
    import libcst as cst

    from ..model import autocast_facts as AF
    from ..model import names as N

    e = dec.decorator
    callee = e.func if isinstance(e, cst.Call) else e
    text = N.dotted_text(callee)
    q = model.imports.qualify(callee)
    if text is None or q is None:
        return None
    present = "custom_fwd" if missing == "custom_bwd" else "custom_bwd"
    if not text.endswith(present) or not q.endswith(present):
        return None
    head = text.split(".", 1)[0]
    if q.startswith(("torch.cuda.amp", "torch.cpu.amp")):
        if not q.startswith("torch.cuda.amp"):
            return None
        dev = '"cuda"'
    else:
        if q not in N.CUSTOM_FWD | N.CUSTOM_BWD or not isinstance(e, cst.Call):
            return None
        dev = next((model.code_for(a.value) for a in e.args if a.keyword is not None and a.keyword.value == "device_type"), None)
        if dev is None:
            return None
        if "." in text and model.imports.names.get(head) == "torch":
            return f"{text[: -len(present)]}{missing}(device_type={dev})"
        if "." not in text and model.imports.names.get(missing) == q[: -len(present)] + missing:
            return f"{missing}(device_type={dev})"
    # the torch.amp spelling through the module
    if "." in text and model.imports.names.get(head) == "torch":
        return f"{head}.amp.{missing}(device_type={dev})"
    if AF.tree(model).torch_bound_before(dec):
        return f"torch.amp.{missing}(device_type={dev})"
    return None
