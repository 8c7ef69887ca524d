"""nanoGPT-style accumulation that drops a batch with a non-finite loss: the micro-step loop
sets a flag and breaks, and the flagged iteration zeroes the gradients and continues. The flag
set by the break is the one the test reads, so a step never follows that zero_grad without a
new scaled backward."""
import torch


def train(model, optimizer, get_batch, max_iters, accum=4):
    scaler = torch.amp.GradScaler("cuda")
    it = 0
    while it < max_iters:
        bad_batch = False
        for _ in range(accum):
            x, y = get_batch()
            with torch.autocast("cuda", dtype=torch.float16):
                loss = model(x, y) / accum
            if not torch.isfinite(loss):
                bad_batch = True
                break
            scaler.scale(loss).backward()
        if bad_batch:
            optimizer.zero_grad(set_to_none=True)
            it += 1
            continue
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
        it += 1
