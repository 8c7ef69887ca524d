"""AMP201 scaler-in-eval: ``scaler.scale(val_loss)`` reports the metric times the scale (probe c)."""

from ..spec import Spec, metric_scaled

SPEC = Spec(
    code="AMP201",
    optimizer="sgd",
    check=metric_scaled("val_loss"),
    evidence="the reported validation loss was {bad_metric} in bad.py vs {good_metric} in good.py, "
             "a ratio of {metric_ratio}: exactly the loss scale {scale} (all {n} evaluations).",
)
