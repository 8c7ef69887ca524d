"""AMP013 scaler-state-not-checkpointed: a resume without the scaler state re-calibrates the scale."""

from ..spec import Spec, extra_skipped

SPEC = Spec(
    code="AMP013",
    optimizer="sgd",
    check=extra_skipped(min_extra=4),
    evidence="after the resume the fresh scaler started again from its initial scale: bad.py skipped "
             "{bad_skipped}/{bad_steps} optimizer steps in all, good.py {good_skipped}/{good_steps} "
             "({extra_skipped} extra skipped steps; final scale {bad_scale} vs {good_scale}).",
)
