"""No GradScaler, and no float16 backward that needs one."""

import torch
import torch.nn.functional as F


def train_bf16(model, optimizer, loader):
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = F.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()


def train_cpu_default(model, optimizer, loader):
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cpu"):  # bfloat16 by default on CPU
            loss = F.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()


def train_configurable(model, optimizer, loader, use_amp, amp_dtype):
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = F.mse_loss(model(x), y)
        if not use_amp:
            loss.backward()  # the path where autocast is off
        with torch.autocast("cuda", dtype=amp_dtype):  # the dtype is a variable: amplint does not guess
            loss = F.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()


def train_disabled(model, optimizer, loader):
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", enabled=False):
            loss = F.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()


@torch.no_grad()
def evaluate(model, loader):
    total = 0.0
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            total += F.mse_loss(model(x), y).item()
    return total


def distill(teacher, student, optimizer, loader):
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            target = teacher(x)  # only the frozen teacher runs in float16
        loss = F.mse_loss(student(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    return target


def train_accelerate(accelerator, model, optimizer, loader):
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = F.mse_loss(model(x), y)
        accelerator.backward(loss)  # the framework scales the loss
        optimizer.step()
        optimizer.zero_grad()


def evaluate_then_train(model, optimizer, val_batch, loader):
    with torch.autocast("cuda", dtype=torch.float16):
        loss = F.mse_loss(model(val_batch[0]), val_batch[1])  # a float16 evaluation, no backward
    print(loss.item())
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = F.mse_loss(model(x), y)  # the loss that is back-propagated is bfloat16
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()


CPU_OR_MPS = torch.device("mps" if torch.backends.mps.is_available() else "cpu")


def train_on_a_device_parameter(model, optimizer, loader, device):
    # a parameter no caller in the file names: bfloat16 on CPU, float16 on CUDA, amplint cannot tell
    for x, y in loader:
        with torch.autocast(device_type=str(device)):
            loss = F.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()


def train_on_cpu_or_mps(model, optimizer, loader):
    # never CUDA: CPU's default autocast dtype is bfloat16
    for x, y in loader:
        with torch.autocast(device_type=CPU_OR_MPS.type):
            loss = F.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()


def train_on_available_device_in_bf16(model, optimizer, loader):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    for x, y in loader:
        with torch.autocast(device, dtype=torch.bfloat16):
            loss = F.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()


def train_on_available_device_disabled(model, optimizer, loader):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    for x, y in loader:
        with torch.autocast(device, enabled=False):
            loss = F.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
