import torch.nn.functional as F
from accelerate import Accelerator


def train(args, model, optimizer, lr_scheduler, loader):
    accelerator = Accelerator(gradient_accumulation_steps=args.gradient_accumulation_steps,
                              mixed_precision=args.mixed_precision)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for epoch in range(args.epochs):
        for batch in loader:
            with accelerator.accumulate(model):
                loss = F.mse_loss(model(batch["x"]), batch["y"])
                accelerator.backward(loss)
                if args.max_grad_norm > 0:
                    accelerator.clip_grad_norm_(model.parameters(), args.max_grad_norm)  # error: AMP005
                optimizer.step()
                lr_scheduler.step()
                optimizer.zero_grad()


class Trainer:
    def __init__(self, model, optimizer):
        self.accelerator = Accelerator(mixed_precision="fp16", gradient_accumulation_steps=8)
        self.model, self.optimizer = self.accelerator.prepare(model, optimizer)

    def fit(self, loader):
        for batch in loader:
            with self.accelerator.accumulate(self.model):
                self.accelerator.backward(self.model(batch).mean())
                self.accelerator.clip_grad_value_(self.model.parameters(), 0.5)  # error: AMP005
                self.optimizer.step()
                self.optimizer.zero_grad()
