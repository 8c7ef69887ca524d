"""AMP007 update-per-optimizer: two updates per iteration grow the scale twice as fast (probe i)."""

from ..spec import Spec, scale_ratio

SPEC = Spec(
    code="AMP007",
    optimizer="sgd",
    check=scale_ratio(min_ratio=8.0),
    evidence="with one `update()` per optimizer the loss scale ended at {bad_scale} after {bad_updates} updates, "
             "vs {good_scale} after {good_updates} with one update per iteration (ratio {scale_ratio}).",
)
