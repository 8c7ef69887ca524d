"""AMP002 grad-use-before-unscale: clipping scaled grads shrinks the SGD update to ~1/scale (probe b)."""

from ..spec import Spec, all_of, loss_ratio, update_ratio

SPEC = Spec(
    code="AMP002",
    optimizer="sgd",  # Adam normalises the update size and hides the failure
    check=all_of(update_ratio(max_ratio=1e-2), loss_ratio(min_ratio=10.0)),
    evidence="with SGD, clipping before `unscale_` made the mean update {update_ratio} of the fixed loop's "
             "(1/scale = {inv_scale}); final loss {bad_loss} vs {good_loss} (start {first_loss}).",
)
