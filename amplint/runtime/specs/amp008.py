"""AMP008 scaler-created-in-loop: the scale restarts every iteration and never backs off (probe a)."""

from ..spec import Spec, skipped_steps

SPEC = Spec(
    code="AMP008",
    optimizer="sgd",
    check=skipped_steps(min_fraction=0.9, max_good_fraction=0.5),
    evidence="bad.py built {bad_scalers} GradScalers and skipped {bad_skipped}/{bad_steps} optimizer steps "
             "(loss {first_loss} -> {bad_loss}); good.py built {good_scalers}, skipped {good_skipped}/{good_steps} "
             "while the scale backed off to {good_scale}, and reached loss {good_loss}.",
)
