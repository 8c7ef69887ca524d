import torch.nn.functional as F
from accelerate import Accelerator


def train(args, model, optimizer, loader):
    accelerator = Accelerator(gradient_accumulation_steps=args.gradient_accumulation_steps,
                              mixed_precision="fp16")
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for step, batch in enumerate(loader):
        with accelerator.accumulate(model):
            loss = F.mse_loss(model(batch["x"]), batch["y"])
            accelerator.backward(loss)
            if accelerator.sync_gradients:
                accelerator.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            optimizer.zero_grad()
        with accelerator.accumulate(model):
            accelerator.backward(loss)
            if not accelerator.sync_gradients:
                continue
            accelerator.clip_grad_norm_(model.parameters(), 1.0)
        with accelerator.accumulate(model):
            accelerator.backward(loss)
            if (step + 1) % args.gradient_accumulation_steps == 0:
                accelerator.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()


def train_bf16(model, optimizer, loader):
    accelerator = Accelerator(gradient_accumulation_steps=4, mixed_precision="bf16")
    for batch in loader:
        with accelerator.accumulate(model):
            accelerator.backward(model(batch).mean())
            accelerator.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()


def train_no_accumulation(model, optimizer, loader):
    accelerator = Accelerator(mixed_precision="fp16")
    for batch in loader:
        with accelerator.accumulate(model):
            accelerator.backward(model(batch).mean())
            accelerator.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()

