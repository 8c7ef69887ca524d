import torch
from torch.amp.grad_scaler import OptState


def train_exclusive(model, optimizer, loader, clip_mode, clip_value):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y)
        scaler.scale(loss).backward()
        if clip_mode == "norm":
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip_value)
        elif clip_mode == "value":
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_value_(model.parameters(), clip_value)
        scaler.step(optimizer)
        scaler.update()


def train_two_optimizers(encoder, decoder, enc_opt, dec_opt, loader):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        enc_opt.zero_grad()
        dec_opt.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = decoder(encoder(x), y)
        scaler.scale(loss).backward()
        scaler.unscale_(enc_opt)
        scaler.unscale_(dec_opt)
        torch.nn.utils.clip_grad_norm_(encoder.parameters(), 1.0)
        torch.nn.utils.clip_grad_norm_(decoder.parameters(), 1.0)
        scaler.step(enc_opt)
        scaler.step(dec_opt)
        scaler.update()


def train_optimizer_list(model, optimizers, loader):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y)
        scaler.scale(loss).backward()
        for opt in optimizers:
            scaler.unscale_(opt)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        for opt in optimizers:
            scaler.step(opt)
        scaler.update()
        for opt in optimizers:
            opt.zero_grad()


class Trainer:
    """Unscales in a clip helper only when the optimizer is not unscaled yet."""

    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer
        self.scaler = torch.amp.GradScaler("cuda")

    def clip(self):
        state = self.scaler._per_optimizer_states[id(self.optimizer)]
        if state["stage"] is not OptState.UNSCALED:
            self.scaler.unscale_(self.optimizer)
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)

    def grad_norm(self):
        self.scaler.unscale_(self.optimizer)
        return torch.nn.utils.get_total_norm([p.grad for p in self.model.parameters()])

    def fit(self, loader, log):
        for x, y in loader:
            with torch.autocast("cuda", dtype=torch.float16):
                loss = self.model(x, y)
            self.scaler.scale(loss).backward()
            log(self.grad_norm())
            self.clip()
            self.scaler.step(self.optimizer)
            self.scaler.update()
            self.optimizer.zero_grad()
