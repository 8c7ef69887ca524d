"""LVSM style: at an accumulation boundary the grads are unscaled and clipped, and a norm guard can
skip both step and update; the next boundary's unscale_ then meets an optimizer already unscaled
("unscale_() has already been called on this optimizer since the last update()")."""
import torch


def train(model, optimizer, loader, accum, clip_norm):
    scaler = torch.amp.GradScaler("cuda")
    for step, batch in enumerate(loader):
        update_grads = (step + 1) % accum == 0
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(batch)
        if update_grads:
            with model.no_sync():
                scaler.scale(loss / accum).backward()
        else:
            scaler.scale(loss / accum).backward()
        skip_optimizer_step = False
        if torch.isnan(loss) or torch.isinf(loss):
            skip_optimizer_step = True
        if update_grads and (not skip_optimizer_step):
            scaler.unscale_(optimizer)  # error: AMP005
            total = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=clip_norm).item()
            if clip_norm > 0:
                if total > 5 * clip_norm:
                    skip_optimizer_step = True
            if not skip_optimizer_step:
                scaler.step(optimizer)
                scaler.update()
            optimizer.zero_grad(set_to_none=True)
