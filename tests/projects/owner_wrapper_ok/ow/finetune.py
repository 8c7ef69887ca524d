import torch
import torch.nn.functional as F

from ow import ScaledOptimizer


def finetune(model, loader, lr=0.01):
    opt = ScaledOptimizer(torch.optim.SGD(model.parameters(), lr=lr))
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = F.cross_entropy(model(x), y)
        opt.backward(loss)
        opt.step()
