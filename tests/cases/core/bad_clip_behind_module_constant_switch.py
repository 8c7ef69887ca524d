"""A script's switches are module constants edited by hand (``CLIP = False`` today): the clip
under ``if CLIP:`` is one configuration of the program, and in it the gradients are still scaled
(AMP002 on each, however many times the switch is tested)."""
import torch

CLIP = False
TRAIN_AUX = True

model, aux, loader, optimizer, aux_optimizer, criterion = build()  # noqa: F821
scaler = torch.amp.GradScaler("cuda")
aux_scaler = torch.amp.GradScaler("cuda")
for epoch in range(10):
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = criterion(model(x), y)
        scaler.scale(loss).backward()
        if CLIP:
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1e-2)  # error: AMP002
        scaler.step(optimizer)
        scaler.update()
        if TRAIN_AUX:
            aux_optimizer.zero_grad()
            with torch.autocast("cuda", dtype=torch.float16):
                aux_loss = criterion(aux(x), y)
            aux_scaler.scale(aux_loss).backward()
            clip_value = 1e-2
            if CLIP:
                torch.nn.utils.clip_grad_norm_(aux.parameters(), clip_value)  # error: AMP002
            aux_scaler.step(aux_optimizer)
            aux_scaler.update()
