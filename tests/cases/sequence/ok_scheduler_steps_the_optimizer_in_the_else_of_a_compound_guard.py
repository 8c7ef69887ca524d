"""A scheduler object that also steps its optimizer unless told to skip it (an ESPnet/neural_sp
``LRScheduler``): the scaled arm steps through the scaler and tells the scheduler to skip the
optimizer; the ``else`` of ``args.use_amp and scaler is not None`` is the fp32 path, where the
backward was plain."""
import torch


class LRScheduler:
    def __init__(self, optimizer, lr):
        self.optimizer = optimizer
        self.lr = lr

    def step(self, skip_optimizer=False):
        if not skip_optimizer:
            self.optimizer.step()

    def zero_grad(self, set_to_none=False):
        self.optimizer.zero_grad(set_to_none=set_to_none)


def train(model, loader, scheduler, args, scaler):
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16, enabled=args.use_amp):
            loss = model(x, y)
        if args.use_amp:
            if scaler is not None:
                scaler.scale(loss).backward()
            else:
                with args.apex_amp.scale_loss(loss, scheduler.optimizer) as scaled_loss:
                    scaled_loss.backward()
        else:
            loss.backward()
        if args.use_amp and scaler is not None:
            scaler.step(scheduler.optimizer)
            scaler.update()
            scheduler.step(skip_optimizer=True)
        else:
            scheduler.step()
        scheduler.zero_grad(set_to_none=True)


def main(model, loader, args):
    optimizer = torch.optim.Adam(model.parameters())
    scheduler = LRScheduler(optimizer, args.lr)
    scaler = None
    if args.use_amp:
        scaler = torch.amp.GradScaler("cuda")
    for _ in range(args.epochs):
        train(model, loader, scheduler, args, scaler)
