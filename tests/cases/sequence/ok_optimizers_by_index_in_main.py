"""Optimizers looked up by index inside loops over them, in a function called from the module."""

import torch


def main(models, optimizers, batches):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in batches:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = sum(m(x, y) for m in models)
        scaler.scale(loss).backward()
        for idx in range(len(optimizers)):
            scaler.unscale_(optimizers[idx])
            torch.nn.utils.clip_grad_norm_(models[idx].parameters(), 1.0)
        for idx in range(len(optimizers)):
            scaler.step(optimizers[idx])
        scaler.update()
        for name in range(len(optimizers)):
            opt = optimizers[name]
            opt.zero_grad()


if __name__ == "__main__":
    main([], [], [])
