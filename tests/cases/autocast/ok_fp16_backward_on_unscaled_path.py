"""Plain backwards on the paths without a GradScaler that are float32 training after all (the
autocast is off there too), or that never run: no AMP106."""
import contextlib

import torch
from torch.amp import GradScaler, autocast


def dead_else(model, loader, optimizer, criterion):
    scaler = GradScaler("cuda")
    for x, y in loader:
        optimizer.zero_grad()
        with autocast("cuda"):
            loss = criterion(model(x), y)
        if scaler is not None:
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        else:
            loss.backward()
            optimizer.step()


def same_flag(model, loader, optimizer, criterion, args):
    scaler = GradScaler("cuda", enabled=args.amp)
    for x, y in loader:
        optimizer.zero_grad()
        with autocast("cuda", enabled=args.amp):
            loss = criterion(model(x), y)
        if args.amp:
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        else:
            loss.backward()
            optimizer.step()


def alias_flag(model, loader, optimizer, criterion, args):
    use_amp = args.amp
    scaler = GradScaler("cuda") if use_amp else None
    for x, y in loader:
        optimizer.zero_grad()
        with autocast("cuda", enabled=use_amp):
            loss = criterion(model(x), y)
        if scaler is not None:
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        else:
            loss.backward()
            optimizer.step()


class Trainer:
    def __init__(self, model, opt, use_amp):
        self.model, self.opt, self.use_amp = model, opt, use_amp
        self.scaler = GradScaler("cuda") if use_amp else None

    def step(self, x, y, criterion):
        with autocast("cuda", enabled=self.use_amp):
            loss = criterion(self.model(x), y)
        if self.scaler is not None:
            self.scaler.scale(loss).backward()
            self.scaler.step(self.opt)
            self.scaler.update()
        else:
            loss.backward()
            self.opt.step()


class BF16Trainer(Trainer):
    def step(self, x, y, criterion):
        with autocast("cuda", dtype=torch.bfloat16):
            loss = criterion(self.model(x), y)
        if self.scaler is not None:
            self.scaler.scale(loss).backward()
            self.scaler.step(self.opt)
            self.scaler.update()
        else:
            loss.backward()
            self.opt.step()


def conditional_context(model, loader, optimizer, criterion, args):
    scaler = GradScaler("cuda") if args.amp else None
    ctx = autocast("cuda", dtype=torch.float16) if args.amp else contextlib.nullcontext()
    lazy = (lambda: autocast("cuda")) if args.amp else contextlib.nullcontext
    for x, y in loader:
        optimizer.zero_grad()
        with ctx, lazy():
            loss = criterion(model(x), y)
        with autocast("cuda") if args.amp else contextlib.nullcontext():
            loss = loss + criterion(model(x), y)
        if scaler is not None:
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        else:
            loss.backward()
            optimizer.step()


def by_device(model, loader, optimizer, criterion, device):
    # without CUDA, ``autocast("cuda")`` is off: the plain arm is float32 training
    scaler = GradScaler("cuda") if device.type == "cuda" else None
    for x, y in loader:
        optimizer.zero_grad()
        with autocast("cuda"):
            loss = criterion(model(x), y)
        if scaler is not None:
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        else:
            loss.backward()
            optimizer.step()


def forward_in_the_same_switch(model, loader, optimizer, criterion, scaler, use_amp):
    for x, y in loader:
        if not use_amp:
            loss = criterion(model(x), y)
        else:
            with autocast("cuda"):
                loss = criterion(model(x), y)
        optimizer.zero_grad()
        if not use_amp:
            loss.backward()
            optimizer.step()
        else:
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()


def optim_step(loss, optimizer, scaler):
    if scaler is not None:
        scaler.scale(loss).backward()
        scaler.step(optimizer)
    else:
        loss.backward()
        optimizer.step()


def gan_with_helper(G, D, optim_G, optim_D, dataset, adv, amp):
    # the helper's ``scaler is None`` arm is the caller's ``amp`` off, and so is its autocast
    scaler = GradScaler("cuda") if amp else None
    for line, real in dataset:
        with autocast("cuda", enabled=amp):
            d_loss = adv.d_loss(D(real), D(G(line).detach()))
        optim_step(d_loss, optim_D, scaler)
        with autocast("cuda", enabled=amp):
            g_loss = adv.g_loss(D(G(line)))
        optim_step(g_loss, optim_G, scaler)
        if scaler is not None:
            scaler.update()
