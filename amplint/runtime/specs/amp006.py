"""AMP006 update-without-step: ``update()`` with no step or unscale_ this iteration raises (§2.2)."""

from ..spec import Spec, raises

SPEC = Spec(
    code="AMP006",
    optimizer="sgd",
    check=raises("AssertionError", "No inf checks were recorded prior to update"),
    evidence="bad.py raised {exception_md} on the first micro-step that was not an accumulation boundary; "
             "good.py ran {good_steps} optimizer steps without an exception (loss {good_first_loss} -> "
             "{good_final_loss}).",
)
