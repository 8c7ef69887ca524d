"""Hyperparameter evolution: every generation calls `train()`, which builds its own optimizer and
GradScaler and runs a whole training (epochs of batches). One scaler per run is right; the
evolution loop is not a training loop (yolov5's `train.py`)."""
import torch


def train(hyp, model, loader, epochs):
    optimizer = torch.optim.SGD(model.parameters(), lr=hyp["lr0"])
    scaler = torch.amp.GradScaler("cuda")
    for epoch in range(epochs):
        for x, y in loader:
            with torch.autocast("cuda", dtype=torch.float16):
                loss = model(x, y)
            optimizer.zero_grad()
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
    return loss.item()


def evolve(hyp, model, loader, generations):
    best = None
    for _ in range(generations):
        hyp = {k: v * 1.1 for k, v in hyp.items()}
        result = train(hyp, model, loader, epochs=3)
        best = result if best is None else min(best, result)
    return best


def fold_runs(model_fn, loaders):
    for loader in loaders:
        # each fold: a new model and optimizer built by the run itself
        train({"lr0": 0.01}, model_fn(), loader, epochs=2)
