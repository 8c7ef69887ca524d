"""An autocast that is always on (float16) with a GradScaler that exists only sometimes: the
paths without the scaler back-propagate a float16 loss unscaled (AMP106)."""
import torch
from apex import amp
from torch.amp import GradScaler, autocast


def train(model, loader, optimizer, criterion, args):
    scaler = GradScaler("cuda") if args.fp16 else None
    for x, y in loader:
        optimizer.zero_grad()
        with autocast("cuda"):
            loss = criterion(model(x.cuda()), y.cuda())
        if scaler is not None:
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        else:
            loss.backward()  # error: AMP106
            optimizer.step()


def backward_step(loss, optimizer, scaler=None):
    if scaler is not None:
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    else:
        loss.backward()  # error: AMP106
        optimizer.step()


def train_with_helper(model, loader, optimizer, criterion, args):
    scaler = GradScaler("cuda") if args.fp16 else None
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = criterion(model(x), y)
        backward_step(loss, optimizer, scaler)


class Trainer:
    def __init__(self, model, opt, use_amp):
        self.model, self.opt = model, opt
        self.scaler = GradScaler("cuda") if use_amp else None

    def step(self, x, y, criterion):
        with autocast("cuda"):
            loss = criterion(self.model(x), y)
        if self.scaler is not None:
            self.scaler.scale(loss).backward()
            self.scaler.step(self.opt)
            self.scaler.update()
        else:
            loss.backward()  # error: AMP106
            self.opt.step()


def scaled_sometimes(model, loader, optimizer, criterion, scaler=None):
    for x, y in loader:
        optimizer.zero_grad()
        with autocast("cuda", dtype=torch.float16):
            loss = criterion(model(x), y)
        if scaler is not None:
            loss = scaler.scale(loss)
        loss.backward()  # error: AMP106
        if scaler is not None:
            scaler.step(optimizer)
            scaler.update()
        else:
            optimizer.step()


def three_backends(model, loader, optimizer, criterion, args):
    scaler = GradScaler("cuda") if args.amp_backend == "native" else None
    for x, y in loader:
        optimizer.zero_grad()
        with autocast("cuda"):
            loss = criterion(model(x), y)
        if scaler is not None:
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        elif args.amp_backend == "apex":
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            optimizer.step()
        else:
            loss.backward()  # error: AMP106
            optimizer.step()


def switched_apart(model, loader, optimizer, criterion, args):
    # the autocast follows one flag, the scaler another: fp16 without scaling when only the first is on
    scaler = GradScaler("cuda") if args.loss_scaling else None
    for x, y in loader:
        optimizer.zero_grad()
        with autocast("cuda", enabled=args.fp16):
            loss = criterion(model(x), y)
        if args.fp16:
            if scaler is not None:
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
            else:
                loss.backward()  # error: AMP106
                optimizer.step()
        else:
            loss.backward()
            optimizer.step()
