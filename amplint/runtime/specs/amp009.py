"""AMP009 partial-loss-scaling: an unscaled auxiliary backward is divided by the scale (probe i4)."""

from ..spec import Spec, loss_ratio

SPEC = Spec(
    code="AMP009",
    optimizer="sgd",
    check=loss_ratio(min_ratio=10.0, key="aux_loss"),
    observable="final auxiliary loss",
    evidence="the auxiliary loss, trained only through its unscaled backward, went {first_loss} -> {bad_loss} in "
             "bad.py vs -> {good_loss} in good.py (ratio {loss_ratio}): its gradients were divided by the scale.",
)
