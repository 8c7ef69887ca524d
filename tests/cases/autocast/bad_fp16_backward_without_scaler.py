"""float16 autocast losses back-propagated with no GradScaler anywhere in the file."""

import torch
import torch.nn.functional as F

ACCUM = 4


def train(model, optimizer, loader):
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = F.mse_loss(model(x), y)
        loss.backward()  # error: AMP106
        optimizer.step()


def train_cuda_default(model, optimizer, loader, device):
    for i, (x, y) in enumerate(loader):
        with torch.autocast(device_type="cuda"):
            out = model(x.to(device))
        loss = F.cross_entropy(out.float(), y) / ACCUM  # computed from fp16 activations
        (loss * 1.0).backward()  # error: AMP106
        if (i + 1) % ACCUM == 0:
            optimizer.step()
            optimizer.zero_grad()


def train_half(model, optimizer, loader, device):
    for x, y in loader:
        with torch.autocast(device.type, dtype=torch.half):
            outputs = model(x)
        torch.autograd.backward(outputs.loss)  # error: AMP106
        optimizer.step()
        optimizer.zero_grad()


def train_enabled_by_flag(model, optimizer, loader, use_amp):
    # ``enabled=`` an expression: on the path where it is true the loss is float16
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = F.mse_loss(model(x), y)
        loss.backward()  # error: AMP106
        optimizer.step()
        optimizer.zero_grad()


def train_enabled_on_gpu(model, optimizer, loader, device):
    for x, y in loader:
        with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=(device == "cuda")):
            out = model(x)
        loss = F.mse_loss(out, y)
        loss.backward()  # error: AMP106
        optimizer.step()


def train_summed_losses(model, optimizer, loader, heads):
    # the loss accumulates float16 terms
    for x, ys in loader:
        loss = 0
        with torch.autocast("cuda", dtype=torch.float16):
            feats = model(x)
            for head, y in zip(heads, ys):
                loss += F.cross_entropy(head(feats), y)
        loss.backward()  # error: AMP106
        optimizer.step()
        optimizer.zero_grad()


def train_summed_outside(model, optimizer, loader):
    for x, y in loader:
        total = 0.0
        with torch.autocast("cuda", dtype=torch.float16):
            out = model(x)
        total += F.mse_loss(out, y)
        total.backward()  # error: AMP106
        optimizer.step()


# the device is CUDA whenever one is available: autocast without a dtype is then float16
DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")
CFG = {"device": "cuda"}


def train_on_available_device(model, optimizer, loader):
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast(device_type=str(DEVICE)):
            out = model(x.to(DEVICE))
        loss = F.mse_loss(out, y)
        loss.backward()  # error: AMP106
        optimizer.step()


def train_on_device_type(model, optimizer, loader):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    for x, y in loader:
        with torch.autocast(device):
            loss = F.mse_loss(model(x), y)
        loss.backward()  # error: AMP106
        optimizer.step()
        optimizer.zero_grad()


def train_on_configured_device(model, optimizer, loader):
    device = torch.device(CFG.get("device", "cuda") if torch.cuda.is_available() else "cpu")
    for x, y in loader:
        with torch.autocast(device_type=device.type):
            loss = F.mse_loss(model(x), y)
        loss.backward()  # error: AMP106
        optimizer.step()
        optimizer.zero_grad()
