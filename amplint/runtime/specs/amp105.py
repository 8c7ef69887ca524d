"""AMP105 backward-inside-autocast: the backward of built-in ops runs in the dtype of its forward op
either way, but a hand-written backward (a custom autograd Function) runs under the autocast
region: its matrix products drop to float16. Measured by the dtype of the matmuls of the backward."""

from ..signs import BackwardPrecision, LossHarm
from ..spec import MECHANISM_ONLY, Spec

SPEC = Spec(
    code="AMP105",
    record_ops=True,
    signs=(
        LossHarm(),
        BackwardPrecision(),
    ),
    expect=MECHANISM_ONLY,
    note="torch.compile's backward_pass_autocast also assumes the documented layout",
)
