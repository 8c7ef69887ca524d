import torch

from runkit.models.builder import build_inference_model, build_model
from runkit.runner import Runner


def main(loader):
    model = build_model(64)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cuda")
    Runner(model, optimizer, scaler).fit(loader)
    return build_inference_model(64)
