import torch
import torch.nn.functional as F
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler


def make_scaler(strategy):
    if strategy == "fsdp":
        return ShardedGradScaler("cuda")
    return torch.amp.GradScaler("cuda")


def train(model, loader, strategy):
    if strategy == "fsdp":
        model = FSDP(model)
    model.half()  # pure fp16 weights: ShardedGradScaler accepts fp16 gradients
    optimizer = torch.optim.AdamW(model.parameters())
    scaler = make_scaler(strategy)
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = F.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
