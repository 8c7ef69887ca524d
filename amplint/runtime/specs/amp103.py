"""AMP103 bce-under-autocast: CUDA autocast refuses ``binary_cross_entropy``; CPU autocast runs it in
float32. On CPU the harness hands each op inside float16 autocast regions to CUDA autocast's own
kernel for it first (``emulate_cuda_autocast``), which raises the error a CUDA run raises."""

from ..signs import Raises
from ..spec import Spec

SPEC = Spec(
    code="AMP103",
    lr=0.5,  # binary cross-entropy trains slowly at the default 0.05
    needs="cuda",
    emulate_cuda_autocast=True,
    signs=(Raises(("RuntimeError", "unsafe to autocast")),),
    note="on CPU: through the CUDA autocast kernel of each op (CPU autocast itself runs the op in float32)",
)
