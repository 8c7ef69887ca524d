"""A deep ensemble: each member has its own optimizer and GradScaler, zipped per batch. The
scaler's update sits after the loop over members, so it updates only the last member's scaler;
every other member meets its next `step()` with no update in between."""
import torch
import torch.nn.functional as F


def train(members, loader, amp=True):
    optimizers = [torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9) for m in members]
    scalers = [torch.amp.GradScaler("cuda", enabled=amp) for _ in members]
    for x, y in loader:
        for k, (member, opt, scaler) in enumerate(zip(members, optimizers, scalers)):
            opt.zero_grad(set_to_none=True)
            with torch.autocast("cuda", dtype=torch.float16, enabled=amp):
                loss = F.cross_entropy(member(x), y)
            scaler.scale(loss).backward()
            scaler.step(opt)  # error: AMP001
        scaler.update()
