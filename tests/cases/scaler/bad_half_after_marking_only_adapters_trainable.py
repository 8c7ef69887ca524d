"""LoRA fine-tuning: the adapters are the only trainable parameters (``p.requires_grad = "lora_"
in n`` leaves them on), then the whole model goes to half precision, adapters included. A
GradScaler steps them: ``unscale_`` refuses fp16 gradients. The twin freezes a teacher whose
every parameter is turned off, which no optimizer steps."""
import torch


def mark_only_lora_trainable(model):
    for n, p in model.named_parameters():
        p.requires_grad = "lora_" in n
    return model


def train(model, teacher, loader, device):
    model = mark_only_lora_trainable(model)
    model = model.to(device).half()  # error: AMP014
    for p in teacher.parameters():
        p.requires_grad = False
    teacher = teacher.to(device).half()
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)
    scaler = torch.amp.GradScaler("cuda")
    for batch in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            with torch.no_grad():
                target = teacher(batch)
            loss = (model(batch) - target).pow(2).mean()
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
