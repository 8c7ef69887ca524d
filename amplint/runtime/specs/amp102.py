"""AMP102 autocast-bad-arguments: a ``torch.device`` as ``device_type`` (or ``True``) raises on entry,
an unknown device string raises, an unsupported dtype warns and disables the region (section 2.4)."""

from ..signs import AutocastOff, Raises, Warns
from ..spec import Spec

SPEC = Spec(
    code="AMP102",
    signs=(
        Raises(("ValueError", "Expected `device_type` of type `str`"), ("RuntimeError", "Expected one of"),
               ("TypeError", "device_type")),
        AutocastOff(),
        Warns("UserWarning", "Disabling autocast"),
    ),
)
