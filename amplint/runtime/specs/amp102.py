"""AMP102 autocast-bad-arguments: a ``torch.device`` as ``device_type`` raises on entry (§2.4)."""

from ..spec import Spec, raises

SPEC = Spec(
    code="AMP102",
    optimizer="sgd",
    check=raises("ValueError", "Expected `device_type` of type `str`", good_must_train=True),
    evidence="bad.py raised {exception_md} on entering the first autocast region; good.py trained "
             "{good_steps} steps (loss {good_first_loss} -> {good_final_loss}).",
)
