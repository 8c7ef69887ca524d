"""AMP902 fsdp-needs-sharded-scaler: with FSDP each rank checks only its own gradient shard for
infs, so with a plain GradScaler the ranks disagree about skipping steps. Run on two gloo ranks
on CPU (FSDP1, ``device_id=cpu``); ``ShardedGradScaler`` reduces the check across the ranks."""

from ..signs import LossHarm, RanksDisagree
from ..spec import Spec

SPEC = Spec(
    code="AMP902",
    world_size=2,
    needs="distributed",
    signs=(
        RanksDisagree(),
        LossHarm(),
    ),
    timeout_s=180.0,
    note="two gloo ranks on CPU, whatever --device says",
)
