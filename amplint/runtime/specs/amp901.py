"""AMP901 scaler-with-bf16: loss scaling is exact in bfloat16, so the scaler changes nothing (probe i6)."""

from ..spec import NO_EFFECT, Spec, identical

SPEC = Spec(
    code="AMP901",
    optimizer="sgd",
    effect=NO_EFFECT,
    check=identical("loss"),
    observable="loss curves (bad vs good)",
    note="bfloat16 keeps float32's exponent range and power-of-two scaling is exact: the scaler is dead weight",
)
