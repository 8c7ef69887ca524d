"""The arm is picked per batch (a flag the loop rebinds): an fp32 micro-step may follow AMP ones
inside one accumulation window, so the fp32 arm's boundary clip can meet gradients the AMP arm
left scaled, and the AMP arm clips before unscale_ anyway."""
import torch


def run_train(model, optimizer, loader, accum):
    scaler = torch.amp.GradScaler("cuda")
    for itr, batch in enumerate(loader):
        amp = not batch["fp32_only"]
        with torch.autocast("cuda", enabled=amp):
            loss = model(batch) / accum
        if amp:
            scaler.scale(loss).backward()
            if itr % accum == 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # error: AMP002
                scaler.step(optimizer)
                scaler.update()
                optimizer.zero_grad()
        else:
            loss.backward()
            if itr % accum == 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # error: AMP002
                optimizer.step()
                optimizer.zero_grad()
