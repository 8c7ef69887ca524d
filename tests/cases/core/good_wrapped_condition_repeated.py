"""The same AMP condition written twice, once wrapped over several lines in parentheses (with a
comment): the arm that unscales is the arm that scaled (LLM expert-iteration style)."""
import torch
from torch.amp import GradScaler, autocast


def train(cfg, model, optimizer, loader, loss_fn):
    scaler = GradScaler("cuda", enabled=cfg.train.mixed_precision)
    for step, batch in enumerate(loader):
        with autocast("cuda", enabled=cfg.train.mixed_precision):
            loss = loss_fn(model, batch) / cfg.train.gradient_accumulation_steps
        if cfg.train.mixed_precision and cfg.train_model.torch_dtype == "float16":
            scaler.scale(loss).backward()
        else:
            loss.backward()
        if (step + 1) % cfg.train.gradient_accumulation_steps == 0:
            if (
                cfg.train.mixed_precision  # fp16 weights only
                and cfg.train_model.torch_dtype == "float16"
            ):
                scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.optimizer.clip_grad_norm)
            if (cfg.train.mixed_precision
                    and cfg.train_model.torch_dtype == "float16"):
                scaler.step(optimizer)
                scaler.update()
            else:
                optimizer.step()
            optimizer.zero_grad(set_to_none=True)
