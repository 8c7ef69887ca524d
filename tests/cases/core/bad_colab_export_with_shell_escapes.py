# -*- coding: utf-8 -*-
"""A notebook exported as a script, with its shell escapes and magics: not Python as written
(AMP000 on the first escape line), but its training loop is still checked."""

!nvidia-smi  # error: AMP000
%matplotlib inline

import torch

scaler = torch.amp.GradScaler("cuda")
!pip install -q timm


def train_loop(model, loader, optimizer):
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y)
        scaler.scale(loss).backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # error: AMP002
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
        files = !ls
