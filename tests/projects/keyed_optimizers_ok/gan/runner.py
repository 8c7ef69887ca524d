import torch

from .updater import AdversarialUpdater


class GANRunner:
    def __init__(self, G, D, scaler, max_grad_norm=None):
        self.nets = {"D": D, "G": G}
        self.optimizers = {
            "D": torch.optim.Adam(D.parameters(), lr=2e-4),
            "G": torch.optim.Adam(G.parameters(), lr=2e-4),
        }
        self.updater = AdversarialUpdater(self.optimizers, scaler=scaler, max_grad_norm=max_grad_norm)

    def fit(self, loader, loss_fn, iters):
        it = 0
        while it < iters:
            for real in loader:
                self.updater.step(real.cuda(), loss_fn, self.nets)
                it += 1
