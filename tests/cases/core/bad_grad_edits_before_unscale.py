import torch
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler


def optimize_dqn(policy_net, optimizer, scaler, batch, gamma=0.99):
    with torch.autocast("cuda", dtype=torch.float16):
        loss = policy_net.td_loss(batch, gamma)
    optimizer.zero_grad()
    scaler.scale(loss).backward()
    for param in policy_net.parameters():
        param.grad.data.clamp_(-1, 1)  # error: AMP002
    scaler.step(optimizer)
    scaler.update()


def sanitize_then_step(model, optimizer, scaler, loss):
    scaler.scale(loss).backward()
    for p in model.parameters():
        if p.grad is not None:
            p.grad = torch.nan_to_num(p.grad)  # error: AMP002
    scaler.step(optimizer)
    scaler.update()


def fsdp_step(module, optimizer, loader):
    model = FSDP(module)
    scaler = ShardedGradScaler()
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y)
        scaler.scale(loss).backward()
        model.clip_grad_norm_(1.0)  # error: AMP002
        scaler.step(optimizer)
        scaler.update()
