"""Test-time adaptation: each call adapts a fresh copy of the model with its own optimizer and
its own GradScaler (a training run per corruption), called from a loop over corruptions. A
scaler per run is right; the optimizer's name does not say it is one, its constructor does."""
import copy

import torch


@torch.no_grad()
def adapt_and_evaluate(source_model, loader, lr=1e-3):
    model = copy.deepcopy(source_model)
    tta = torch.optim.Adam(model.parameters(), lr=lr)
    tta_scaler = torch.amp.GradScaler("cuda")
    correct = 0
    for x, y in loader:
        with torch.enable_grad():
            with torch.autocast("cuda", dtype=torch.float16):
                loss = model(x).softmax(1).mean()
            tta.zero_grad(set_to_none=True)
            tta_scaler.scale(loss).backward()
            tta_scaler.step(tta)
            tta_scaler.update()
        correct += (model(x).argmax(1) == y).sum().item()
    return correct


def main(model, loaders):
    for name, loader in loaders.items():
        print(name, adapt_and_evaluate(model, loader))
