"""A learner class steps its own scaler in `learn()` and updates it only on logging calls; a loop
of the same file builds the learner and calls `learn()` per batch (the calls reach the class
through the local instance)."""
import torch


class Learner:
    def __init__(self, model, amp=True):
        self.model = model
        self.opt = torch.optim.RMSprop(model.parameters(), lr=1e-3)
        self.scaler = torch.amp.GradScaler("cuda", enabled=amp)
        self.num_updates = 0

    def learn(self, loss):
        self.opt.zero_grad(set_to_none=True)
        self.scaler.scale(loss).backward()
        self.scaler.step(self.opt)  # error: AMP001
        self.num_updates += 1
        if self.num_updates % 50 == 0:
            print(self.scaler.get_scale())
            self.scaler.update()


def train(model, loader):
    learner = Learner(model)
    for batch in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(batch)
        learner.learn(loss)
