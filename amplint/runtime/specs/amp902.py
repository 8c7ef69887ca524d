"""AMP902 fsdp-needs-sharded-scaler: the difference needs several FSDP ranks; on one process the
fixtures run without FSDP and must behave the same."""

from ..spec import DISTRIBUTED_EFFECT, Spec, identical

SPEC = Spec(
    code="AMP902",
    optimizer="sgd",
    effect=DISTRIBUTED_EFFECT,
    check=identical("loss"),
    observable="loss curves on one process",
    note="ranks disagreeing about skipped steps needs a multi-process FSDP launch; the harness runs one process",
)
