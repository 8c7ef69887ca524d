"""HiFi-GAN style: one helper unscales, clips and steps the optimizer it looks up by name, called
for the discriminators ("d") and then the generator ("g"); one update follows. Each optimizer is
unscaled once."""
import torch


class GANTrainer:
    def __init__(self, components, cfg):
        self.generator = components["generator"]
        self.discriminator = components["discriminator"]
        self.optimizers = components["optimizers"]
        self.scaler = components.get("scaler")
        self.cfg = cfg

    def _backward(self, loss):
        if self.scaler is not None:
            self.scaler.scale(loss).backward()
        else:
            loss.backward()

    def _clip_and_step(self, name, params):
        opt = self.optimizers[name]
        if self.scaler is not None:
            self.scaler.unscale_(opt)
            norm = torch.nn.utils.clip_grad_norm_(params, self.cfg["clip"])
            self.scaler.step(opt)
        else:
            norm = torch.nn.utils.clip_grad_norm_(params, self.cfg["clip"])
            opt.step()
        return float(norm)

    def train_step(self, mel, wav):
        self.optimizers["d"].zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler is not None):
            wav_hat = self.generator(mel)
            loss_d = self.discriminator(wav, wav_hat.detach())
        self._backward(loss_d)
        self._clip_and_step("d", self.discriminator.parameters())
        self.optimizers["g"].zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler is not None):
            loss_g = -self.discriminator(wav, wav_hat).mean()
        self._backward(loss_g)
        self._clip_and_step("g", self.generator.parameters())
        if self.scaler is not None:
            self.scaler.update()


def main(components, cfg, loader):
    trainer = GANTrainer(components, cfg)
    for mel, wav in loader:
        trainer.train_step(mel, wav)
