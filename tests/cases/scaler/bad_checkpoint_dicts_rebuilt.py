"""Checkpoint dicts built twice in one function under the same name, one saved per step and one
per epoch, a dict filled by subscripts and written by another library's save on one branch, and
a dict completed by the method's own **kwargs: each lacks the scaler's state."""
import torch


def train(model, optimizer, loader, epochs, out):
    scaler = torch.amp.GradScaler("cuda")
    for epoch in range(epochs):
        for step, (x, y) in enumerate(loader):
            with torch.autocast("cuda", dtype=torch.float16):
                loss = model(x, y)
            optimizer.zero_grad()
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            if step % 500 == 0:
                checkpoint = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}
                torch.save(checkpoint, f"{out}/latest_step.pth")  # error: AMP013
        checkpoint = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}
        torch.save(checkpoint, f"{out}/latest.pth")  # error: AMP013


class Trainer:
    def __init__(self, model, optimizer, use_tpu=False):
        self.model = model
        self.optimizer = optimizer
        self.use_tpu = use_tpu
        self.epoch = 0
        self.scaler = torch.amp.GradScaler("cuda")

    def fit(self, loader):
        for x, y in loader:
            with torch.autocast("cuda", dtype=torch.float16):
                loss = self.model(x, y)
            self.optimizer.zero_grad()
            self.scaler.scale(loss).backward()
            self.scaler.step(self.optimizer)
            self.scaler.update()
        self.epoch += 1
        self.save("last.pt")
        self.save_with_metrics(self.epoch, train_loss=loss.item(), best=False)

    def save(self, path):
        state = {}
        state["state_dict"] = self.model.state_dict()
        state["optimizer"] = self.optimizer.state_dict()
        state["epoch"] = self.epoch
        if self.use_tpu:
            import torch_xla.core.xla_model as xm

            xm.save(state, path)
        else:
            torch.save(state, path)  # error: AMP013

    def save_with_metrics(self, epoch, best=False, **kwargs):
        torch.save({"model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(), **kwargs},  # error: AMP013
                   "best.pt" if best else f"epoch{epoch}.pt")
