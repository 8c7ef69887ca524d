"""AMP005 unscale-twice: the second ``unscale_`` before an ``update()`` raises (probe f)."""

from ..spec import Spec, raises

SPEC = Spec(
    code="AMP005",
    optimizer="sgd",
    # good.py steps once per accumulation window (10 steps in 40 micro-batches): it need not halve the loss
    check=raises("RuntimeError", "unscale_() has already been called on this optimizer"),
    evidence="bad.py raised {exception_md} on the second accumulation micro-step; good.py ran {good_steps} "
             "optimizer steps without an exception (loss {good_first_loss} -> {good_final_loss}).",
)
