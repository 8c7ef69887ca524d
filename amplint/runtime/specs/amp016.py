"""AMP016 scaler-device-mismatch: a default (CUDA) scaler disables itself on a host without CUDA,
so the fp16 CPU backward runs unscaled and small gradients flush to zero."""

from ..spec import NO_CUDA_HOST_EFFECT, Spec, all_of, warns, zero_grads

SPEC = Spec(
    code="AMP016",
    optimizer="sgd",
    effect=NO_CUDA_HOST_EFFECT,
    check=all_of(zero_grads(min_ratio=100.0, min_fraction=0.05), warns("UserWarning", "CUDA is not available")),
    observable="zero-gradient fraction (scaler disabled)",
    evidence="the default-device scaler warned ({messages_md}) and disabled itself (scale 1); the fp16 "
             "backward then flushed {bad_zero} of the gradient entries to exactly zero vs {good_zero} with "
             "`GradScaler(\"cpu\")`.",
    note="where torch sees CUDA, the default-device scaler is enabled and this failure does not occur",
)
