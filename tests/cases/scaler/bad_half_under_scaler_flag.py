"""`--fp16` both converts the weights to fp16 and enables the GradScaler: whenever the flag is on,
the first `scaler.step()` raises "Attempting to unscale FP16 gradients"."""
import argparse

import torch


def main(build_model, loader):
    ap = argparse.ArgumentParser()
    ap.add_argument("--fp16", action="store_true", help="train in half precision to save memory")
    args = ap.parse_args()
    model = build_model().cuda()
    if args.fp16:
        model.half()  # error: AMP014
    optim = torch.optim.AdamW(model.parameters(), lr=3e-5)
    scaler = torch.amp.GradScaler("cuda", enabled=args.fp16)
    model.train()
    for ids, lab in loader:
        with torch.autocast("cuda", dtype=torch.float16, enabled=args.fp16):
            loss = model(ids, labels=lab).loss
        optim.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.unscale_(optim)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optim)
        scaler.update()
