"""A GAN step with one scaler that updates after each optimizer; between them, loops over the
discriminator's parameters switch requires_grad. Those loops are part of the iteration: the
first update still comes before another optimizer's step in the same iteration."""
import torch


def train(g_model, d_model, g_optimizer, d_optimizer, scaler: torch.amp.GradScaler, prefetcher):
    batch = prefetcher.next()
    while batch is not None:
        for p in d_model.parameters():
            p.requires_grad = False
        g_model.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.float16):
            g_loss = g_model(batch)
        scaler.scale(g_loss).backward()
        scaler.step(g_optimizer)
        scaler.update()  # error: AMP007
        for p in d_model.parameters():
            p.requires_grad = True
        d_model.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.float16):
            d_loss = d_model(batch)
        scaler.scale(d_loss).backward()
        scaler.step(d_optimizer)
        scaler.update()  # error: AMP007
        batch = prefetcher.next()
