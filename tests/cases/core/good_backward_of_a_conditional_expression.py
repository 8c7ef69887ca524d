"""``(scaler.scale(loss) if scaler is not None else loss).backward()``: each arm runs on the paths
its test selects, so the fp32 arm's plain backward is no AMP004 and the AMP arm unscales before
the clip."""
import torch


def train(model, opt, loader, use_amp):
    scaler = torch.amp.GradScaler("cuda") if use_amp else None
    for x in loader:
        loss = model(x)
        (scaler.scale(loss) if scaler is not None else loss).backward()
        if scaler is not None:
            scaler.unscale_(opt)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        if scaler is not None:
            scaler.step(opt)
            scaler.update()
        else:
            opt.step()
