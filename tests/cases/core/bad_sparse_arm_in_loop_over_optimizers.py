"""A trainer steps a dict of optimizers in a loop that picks the arm by the key: the sparse one
directly (AMP003: it skips the scaler on scaled gradients), the disc one only once the GAN
starts, the others through the scaler. The update after the loop follows a step on every real
run: the path where every pass took an arm that leaves the scaler alone is not what anyone
means, so no AMP006 there (the driver's loop made it an exact path before)."""
import torch


def build_optimizers(model, disc, lr):
    return {
        "autoencoder": torch.optim.Adam(model.parameters(), lr=lr),
        "codebook": torch.optim.SparseAdam(list(model.codebook.parameters()), lr=lr),
        "disc": torch.optim.Adam(disc.parameters(), lr=lr),
    }


def build_scaler(cfg):
    return torch.amp.GradScaler("cuda", enabled=cfg.amp)


class Trainer:
    def __init__(self, model, disc, cfg):
        self.model, self.disc, self.cfg = model, disc, cfg
        self.optimizers = build_optimizers(model, disc, cfg.lr)
        self.scaler = build_scaler(cfg)
        self.iteration = 0

    def train_iteration(self, x):
        for opt in self.optimizers.values():
            opt.zero_grad(set_to_none=True)
        use_gan = self.iteration >= self.cfg.disc_start
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.cfg.amp):
            loss = self.model(x)
        self.scaler.scale(loss).backward()
        for name, opt in self.optimizers.items():
            if name == "disc" and not use_gan:
                continue
            if name == "codebook":
                opt.step()  # error: AMP003
            else:
                self.scaler.step(opt)
        self.scaler.update()
        self.iteration += 1


def main(cfg, model, disc, loader):
    trainer = Trainer(model, disc, cfg)
    while trainer.iteration < cfg.iters:
        for x in loader:
            trainer.train_iteration(x)
            if trainer.iteration >= cfg.iters:
                break
