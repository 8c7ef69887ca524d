"""One flag picks the AMP or the fp32 arm, each with its own accumulation boundary (h2o
LLM-studio style): an iteration takes the arm the previous one took, so the fp32 arm's clip
never sees gradients the AMP arm's non-boundary micro-steps left scaled."""
import torch


def run_train(cfg, model, optimizer, loader):
    scaler = torch.amp.GradScaler("cuda")
    for itr, batch in enumerate(loader):
        with torch.autocast("cuda", enabled=cfg.environment.mixed_precision):
            loss = model(batch) / cfg.training.grad_accumulation
        if cfg.environment.mixed_precision:
            scaler.scale(loss).backward()
            if itr % cfg.training.grad_accumulation == 0:
                if cfg.training.gradient_clip > 0:
                    scaler.unscale_(optimizer)
                    torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.training.gradient_clip)
                scaler.step(optimizer)
                scaler.update()
                optimizer.zero_grad(set_to_none=True)
        else:
            loss.backward()
            if itr % cfg.training.grad_accumulation == 0:
                if cfg.training.gradient_clip > 0:
                    torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.training.gradient_clip)
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
