"""The update lives in hooks the trainer is handed (a list its caller builds, or objects amplint
cannot see): the loop over them runs every hook after each step, so the step is followed by the
update, and no AMP001 is reported on a path where no hook ran."""
import torch


class Hook:
    def after_train_iter(self, trainer):
        pass


class LossScaleHook(Hook):
    def after_train_iter(self, trainer):
        trainer.scaler.update()


class ThroughputHook(Hook):
    def after_train_iter(self, trainer):
        pass


class T:
    def __init__(self, model, optimizer, scaler, hooks=()):
        self.model = model
        self.optimizer = optimizer
        self.scaler = scaler
        self.hooks = list(hooks)

    def train_epoch(self, itr):
        for x, y in itr:
            with torch.autocast("cuda", dtype=torch.float16):
                loss = self.model(x, y)
            self.scaler.scale(loss).backward()
            self.scaler.step(self.optimizer)
            self.optimizer.zero_grad()
            for h in self.hooks:
                h.after_train_iter(self)


class Unseen:
    def __init__(self, model, optimizer, scaler, hooks):
        self.model = model
        self.optimizer = optimizer
        self.scaler = scaler
        self.hooks = hooks

    def train_epoch(self, itr):
        for x, y in itr:
            with torch.autocast("cuda", dtype=torch.float16):
                loss = self.model(x, y)
            self.scaler.scale(loss).backward()
            self.scaler.step(self.optimizer)
            self.optimizer.zero_grad()
            for h in self.hooks:
                h.after_train_iter(self)


def main(model, opt, itr):
    scaler = torch.amp.GradScaler("cuda")
    t = T(model, opt, scaler, hooks=[LossScaleHook(), ThroughputHook()])
    t.train_epoch(itr)
