"""The run builds the scaler, hands it to the trainer and checkpoints through a helper; it saves
and restores the scaler's state itself beside the helper's checkpoint."""
import torch

from ldm.checkpoint import load_checkpoint, save_checkpoint
from ldm.trainer import LDMTrainer


def main(unet, loader, out, steps):
    optimizer = torch.optim.AdamW(unet.parameters(), lr=1e-4)
    scaler = torch.amp.GradScaler("cuda", growth_interval=500)
    step = load_checkpoint(out, unet, optimizer)
    scaler.load_state_dict(torch.load(f"{out}.scaler", map_location="cpu"))
    trainer = LDMTrainer(unet, optimizer, scaler)
    for latents, cond in loader:
        loss = trainer.step(latents, cond)
        step += 1
        if step % 100 == 0:
            print(f"step {step} loss {loss.item():.4f} scale {scaler.get_scale():.0f}")
        if step % 10_000 == 0:
            save_checkpoint(out, step, unet, optimizer)
            torch.save(scaler.state_dict(), f"{out}.scaler")
        if step >= steps:
            break
