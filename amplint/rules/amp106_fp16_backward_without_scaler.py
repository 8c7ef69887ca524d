from __future__ import annotations

from typing import Iterable

from .base import Finding, Rule
from .common import call_text

_SCALER_WORDS = ("scaler", "loss_scale")


class Fp16BackwardWithoutScaler(Rule):
    """## What it does
    Checks for a backward pass of a loss computed under float16 autocast, in a file that has
    no GradScaler at all. The loss counts as float16 when it (or a value it is computed
    from, in the same function) is assigned inside an autocast region whose dtype is
    literally `torch.float16` / `torch.half`, or whose device is `"cuda"` with no dtype
    (CUDA's default is float16, also for `torch.cuda.amp.autocast()`).

    The finding is reported on the `backward()` call.

    Not reported: bfloat16 regions, CPU autocast without a dtype (bfloat16), regions
    disabled by a literal `enabled=False`, regions whose `enabled=` or `dtype=` is a
    variable (`enabled=use_amp`: amplint cannot tell which configuration runs), inference
    code (no backward), and files with any GradScaler or scaler-like name (a scaler that is
    bypassed is AMP004's business).

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
    is a loss computed by a helper or by a model whose `forward` is autocast-decorated. Code
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
    fix_title = None
    fix_availability = "none"
    triggers = ("autocast",)
    screen = "autocast_backward"
    reported_on = "the `backward()` call"

    def check(self, model) -> Iterable[Finding]:
        from ..model import names as N

        fp16 = [r for r in model.regions if r.kind == "autocast" and _fp16(model, r)]
        if not fp16:
            return
        candidates = [
            s for s in model.calls
            if not s.in_lambda and (s.method == "backward" and s.recv_node is not None or s.qual in N.AUTOGRAD_BACKWARD)
        ]
        if not candidates or _has_scaler(model):
            return
        view = None
        for site in candidates:
            if site.qual in N.AUTOGRAD_BACKWARD:
                arg = site.arg(0, "tensors")
                expr = arg.value if arg is not None else None
            else:
                expr = site.recv_node
            if expr is None:
                continue
            if view is None:
                from ..model import autocast_facts as AF

                view = AF.tree(model)
            taint = _Taint(model, view, site.func)
            pos = view.order.get(id(site.stmt))
            if pos is None or not any(taint.at(k, pos) for k in _keys(expr)):
                continue
            yield Finding(node=site.node, stmt=site.stmt, message=self.message.format(call=call_text(model, site)))


def _fp16(model, r) -> bool:
    """An autocast region that certainly autocasts to float16 when it runs."""
    from ..model import autocast_facts as AF

    return AF.intended(model, r)[2] is True and AF.effective_dtype(model, r) == "float16"


def _has_scaler(model) -> bool:
    if model.scalers.any():
        return True

    def scalerish(text) -> bool:
        t = (text or "").lower()
        return any(w in t for w in _SCALER_WORDS)

    for f in model.functions:
        if any(scalerish(p) for p in f.params):
            return True
    for c in model.calls:
        if scalerish(c.text):
            return True
    for a in model.assignments:
        if any(scalerish(t) for t in a.targets):
            return True
    return any(scalerish(k) or scalerish(v) for k, v in model.imports.names.items())


class _Taint:
    """Is a name, read at a statement, bound to a value computed under float16 autocast?

    The binding that counts is the last assignment to the name before the statement, in source
    order, in the same function; a value computed from tainted names is tainted.
    """

    def __init__(self, model, view, func) -> None:
        from ..model import autocast_facts as AF

        self.view = view
        self.fp16_stmts: set[int] = set()
        for c in func.calls:
            r = AF.innermost_autocast(c.regions)
            if r is not None and _fp16(model, r):
                self.fp16_stmts.add(id(c.stmt))
        self.assigns: dict[str, list] = {}
        if self.fp16_stmts:
            for a in model.assignments:
                if a.func is func:
                    for t in a.targets:
                        if t is not None:
                            self.assigns.setdefault(t, []).append(a)
        self.memo: dict[tuple[str, int], bool] = {}

    def at(self, key: str, pos: int, depth: int = 0) -> bool:
        if not self.fp16_stmts or depth > 8:
            return False
        memo_key = (key, pos)
        if memo_key in self.memo:
            return self.memo[memo_key]
        self.memo[memo_key] = False
        before = [(self.view.order.get(id(a.stmt), -1), a) for a in self.assigns.get(key, ())]
        before = [(o, a) for o, a in before if 0 <= o < pos]
        result = False
        if before:
            o, last = max(before, key=lambda t: t[0])
            if id(last.stmt) in self.fp16_stmts:
                result = True
            elif last.value is not None:
                result = any(self.at(k, o, depth + 1) for k in _keys(last.value))
        self.memo[memo_key] = result
        return result


def _keys(expr) -> set[str]:
    """Dotted names read in ``expr`` and their prefixes (``out.loss`` -> ``out.loss``, ``out``)."""
    import libcst as cst

    from ..model.syntax import children
    from ..model.names import dotted_text

    out: set[str] = set()
    stack = [expr]
    while stack:
        n = stack.pop()
        if isinstance(n, (cst.Name, cst.Attribute)):
            text = dotted_text(n)
            if text is not None:
                parts = text.split(".")
                for i in range(1, len(parts) + 1):
                    out.add(".".join(parts[:i]))
                continue
        if isinstance(n, (cst.Lambda,)):
            continue
        stack.extend(children(n))
    return out
