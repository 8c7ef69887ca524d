"""AMP103 bce-under-autocast: CUDA autocast refuses ``binary_cross_entropy``; CPU runs it in fp32."""

from ..spec import NEEDS_CUDA_EFFECT, Spec, raises

SPEC = Spec(
    code="AMP103",
    optimizer="sgd",
    effect=NEEDS_CUDA_EFFECT,
    check=raises("RuntimeError", "unsafe to autocast", good_must_train=True),
    evidence="bad.py {bad}, good.py {good}: CPU autocast runs binary_cross_entropy in float32, "
             "so only a CUDA run raises `RuntimeError: ... unsafe to autocast`.",
    note="CUDA autocast registers binary_cross_entropy as banned; CPU autocast runs it in float32",
)
