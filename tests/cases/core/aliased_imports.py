import torch
import torch.cuda.amp as amp
from torch.amp import GradScaler as GS
from torch.nn.utils import clip_grad_norm_ as clip
from torch.nn.utils import clip_grad_value_ as clip_value


def train(model, optimizer, loader):
    scaler = GS("cuda")
    legacy = amp.GradScaler()  # error: AMP101
    for x, y in loader:
        with amp.autocast():  # error: AMP101
            loss = model(x, y)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        clip(model.parameters(), 1.0)
        clip_value(model.parameters(), 0.5)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
    return legacy
