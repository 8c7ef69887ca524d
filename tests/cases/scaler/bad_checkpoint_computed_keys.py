import os

import torch


def save_checkpoint(nets, optims, step, ckpt_dir):
    ckpt = {f"{name}_state_dict": net.state_dict() for name, net in nets.items()}
    ckpt.update({f"{name}_optim": opt.state_dict() for name, opt in optims.items()})
    ckpt["step"] = step
    torch.save(ckpt, os.path.join(ckpt_dir, f"ckpt_{step:06d}.pt"))  # error: AMP013


def save_filled(model, optimizer, path):
    state = {}
    state["model"] = model.state_dict()
    state["optimizer"] = optimizer.state_dict()
    torch.save(state, path)  # error: AMP013


def train(nets, optims, loader, ckpt_dir):
    scaler = torch.amp.GradScaler("cuda")
    for step, (x, y) in enumerate(loader):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = sum(net(x, y) for net in nets.values())
        scaler.scale(loss).backward()
        for opt in optims.values():
            scaler.step(opt)
        scaler.update()
        if step % 1000 == 0:
            save_checkpoint(nets, optims, step, ckpt_dir)
            save_filled(nets["actor"], optims["actor"], os.path.join(ckpt_dir, "actor.pt"))
