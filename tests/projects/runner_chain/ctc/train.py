"""Entry point: it builds the scaler and names only the runner."""
import torch

from ctc.runner import Runner


def main(model, loader, epochs=10):
    scaler = torch.amp.GradScaler("cuda")
    runner = Runner(model.cuda(), scaler, 3e-4)
    runner.fit(loader, epochs)
