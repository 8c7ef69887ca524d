import torch


class LDMTrainer:
    def __init__(self, unet, optimizer, scaler):
        self.unet = unet
        self.optimizer = optimizer
        self.scaler = scaler

    def step(self, latents, cond):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = self.unet(latents, cond).pow(2).mean()
        self.optimizer.zero_grad(set_to_none=True)
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
        return loss.detach()
