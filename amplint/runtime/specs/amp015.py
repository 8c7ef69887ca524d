"""AMP015 scaled-loss-as-metric: the logged loss is the scaled one, ``scale`` times too large."""

from ..spec import Spec, metric_scaled

SPEC = Spec(
    code="AMP015",
    optimizer="sgd",
    check=metric_scaled("loss"),
    observable="logged loss ratio = scale",
    evidence="every logged loss of bad.py was the true one times the loss scale: last {bad_metric} vs "
             "{good_metric}, a ratio of {metric_ratio} = scale {scale} ({n} steps).",
)
