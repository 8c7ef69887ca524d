"""Adversarial (FGM) fine-tuning under four config flags: the loop head meets states that differ only
in how far they can be trusted, and which of them survives must not depend on the hash seed."""
import time

import torch


class CFG:
    apex = True
    unscale = False
    fgm = True
    gradient_accumulation_steps = 2
    max_grad_norm = 1000
    batch_scheduler = True
    epochs = 3
    print_freq = 20


class FGM:
    def __init__(self, model):
        self.model = model
        self.backup = {}

    def attack(self, epsilon=1.0, emb_name="word_embeddings"):
        for name, param in self.model.named_parameters():
            if param.requires_grad and emb_name in name:
                self.backup[name] = param.data.clone()
                norm = torch.norm(param.grad)
                if norm != 0:
                    param.data.add_(epsilon * param.grad / norm)

    def restore(self, emb_name="word_embeddings"):
        for name, param in self.model.named_parameters():
            if param.requires_grad and emb_name in name:
                param.data = self.backup[name]
        self.backup = {}


def train_fn(loader, model, criterion, optimizer, scheduler, device):
    model.train()
    scaler = torch.cuda.amp.GradScaler(enabled=CFG.apex)  # error: AMP008, AMP101
    if CFG.fgm:
        fgm = FGM(model)
    else:
        fgm = None
    global_step = 0
    for step, (inputs, labels) in enumerate(loader):
        for k, v in inputs.items():
            inputs[k] = v.to(device)
        labels = labels.to(device)
        with torch.cuda.amp.autocast(enabled=CFG.apex):  # error: AMP101
            loss = criterion(model(inputs), labels)
        if CFG.gradient_accumulation_steps > 1:
            loss = loss / CFG.gradient_accumulation_steps
        scaler.scale(loss).backward()
        if CFG.unscale:
            scaler.unscale_(optimizer)  # error: AMP005
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), CFG.max_grad_norm)  # error: AMP002
        if CFG.fgm:
            fgm.attack()
            with torch.cuda.amp.autocast(enabled=CFG.apex):  # error: AMP101
                loss_adv = criterion(model(inputs), labels)
                loss_adv.backward()  # error: AMP009, AMP105
            fgm.restore()
        if (step + 1) % CFG.gradient_accumulation_steps == 0:
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
            global_step += 1
            if CFG.batch_scheduler:
                scheduler.step()  # error: AMP903
        if step % CFG.print_freq == 0 or step == (len(loader) - 1):
            print(f"{step} {grad_norm:.4f} {scheduler.get_lr()[0]:.8f}")
    return grad_norm


def train_loop(folds, model, criterion, optimizer, scheduler, device):
    for fold in folds:
        best = float("inf")
        for epoch in range(CFG.epochs):
            start = time.time()
            norm = train_fn(fold, model, criterion, optimizer, scheduler, device)
            if norm < best:
                best = norm
                torch.save({"model": model.state_dict()}, f"fold{fold}.pth")
