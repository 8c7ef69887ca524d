"""``(scaler.scale(loss) if scaler is not None else loss).backward()`` and a clip with no
``unscale_``: on the AMP paths the clip sees scaled gradients."""
import torch


def train(model, opt, loader, use_amp):
    scaler = torch.amp.GradScaler("cuda") if use_amp else None
    for x in loader:
        loss = model(x)
        (scaler.scale(loss) if scaler is not None else loss).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # error: AMP002
        if scaler is not None:
            scaler.step(opt)
            scaler.update()
        else:
            opt.step()
