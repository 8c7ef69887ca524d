"""AMP010 grad-penalty-not-unscaled: a penalty from scaled gradients is ``scale`` times too large."""

from ..spec import Spec, all_of, loss_ratio, metric_scaled

SPEC = Spec(
    code="AMP010",
    optimizer="sgd",
    # the first penalty is computed from identical parameters in both loops: an exact ratio
    check=all_of(metric_scaled("penalty", first_only=True), loss_ratio(min_ratio=10.0)),
    observable="first penalty ratio = scale; final loss",
    evidence="the first gradient penalty was {bad_metric} in bad.py vs {good_metric} in good.py for the same "
             "parameters, a ratio of {metric_ratio} = the loss scale {scale}; the inflated penalty swamped the "
             "loss: final loss {bad_loss} vs {good_loss}.",
)
