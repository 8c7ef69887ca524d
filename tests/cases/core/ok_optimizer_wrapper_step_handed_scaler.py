"""An optimizer wrapper of another package (StarGAN-VC's MultiOptimizer) steps one of its
optimizers by key and is handed the scaler, None without AMP: ``step(key, scaler=scaler)`` runs
``scaler.step(opt)`` and ``update()`` itself. A torch optimizer's ``step`` takes a closure only,
so a step that receives the scaler is no direct step on scaled gradients (AMP003)."""
import torch
from losses import compute_d_loss


class Trainer:
    def __init__(self, model, optimizer, loader, device=torch.device("cpu"), fp16_run=False):
        self.model = model
        self.optimizer = optimizer
        self.loader = loader
        self.fp16_run = fp16_run
        self.device = device

    def train_epoch(self):
        scaler = torch.cuda.amp.GradScaler() if ("cuda" in str(self.device) and self.fp16_run) else None  # error: AMP101
        for batch in self.loader:
            self.optimizer.zero_grad()
            if scaler is not None:
                with torch.autocast("cuda", dtype=torch.float16):
                    d_loss, d_parts = compute_d_loss(self.model, batch)
                scaler.scale(d_loss).backward()
            else:
                d_loss, d_parts = compute_d_loss(self.model, batch)
                d_loss.backward()
            self.optimizer.step("discriminator", scaler=scaler)

            self.optimizer.zero_grad()
            if scaler is not None:
                with torch.autocast("cuda", dtype=torch.float16):
                    g_loss = self.model.generator(batch)
                scaler.scale(g_loss).backward()
            else:
                g_loss = self.model.generator(batch)
                g_loss.backward()
            self.optimizer.step("generator", scaler=scaler)
            self.optimizer.step("mapping_network", scaler=scaler)
