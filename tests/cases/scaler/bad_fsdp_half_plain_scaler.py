"""Pure fp16 weights sharded with FSDP, stepped by a plain GradScaler: the plain scaler refuses
fp16 gradients (AMP014) and cannot unscale sharded ones (AMP902). Switching it to
`ShardedGradScaler` (AMP902's fix) removes both: the AMP014 finding names the constructor as
its cause (a fuzzed seed found the fix removing a finding that did not say so)."""
import torch
import torch.nn.functional as F
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP


def make_scaler(init_scale):
    return torch.amp.GradScaler("cuda", init_scale=init_scale)  # error: AMP902


def train(model, loader, strategy):
    if strategy == "fsdp":
        model = FSDP(model)
    model.half()  # error: AMP014
    optimizer = torch.optim.AdamW(model.parameters())
    scaler = make_scaler(2.0**16)
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = F.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
