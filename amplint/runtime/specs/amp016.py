"""AMP016 scaler-device-mismatch: a default (CUDA) scaler disables itself on a host without CUDA,
so the float16 CPU backward runs unscaled and small gradients flush to zero."""

from ..signs import LossHarm, ScalerDisabled, Warns, ZeroGrads
from ..spec import Spec

SPEC = Spec(
    code="AMP016",
    optimizer="adam",  # Adam trains on whatever survives the underflow: the loss shows how much did not
    n_batches=200,  # enough Adam steps for the lost gradients to show in the loss
    needs="cpu-host",
    signs=(
        LossHarm(),
        ScalerDisabled(),
        ZeroGrads(),
        Warns("UserWarning", "CUDA is not available"),
    ),
    context="with Adam",
    note="where torch sees CUDA, the default-device scaler is enabled and this failure cannot occur",
)
