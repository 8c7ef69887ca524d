import argparse

import torch
import torch.nn.functional as F


def train_model(model, device, epochs=5, learning_rate=1e-5):
    optimizer = torch.optim.RMSprop(model.parameters(), lr=learning_rate)
    grad_scaler = torch.amp.GradScaler("cuda")
    for _ in range(epochs):
        x = torch.randn(4, 3, device=device)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = F.mse_loss(model(x), x)
        optimizer.zero_grad(set_to_none=True)
        grad_scaler.scale(loss).backward()
        grad_scaler.step(optimizer)
        grad_scaler.update()


def export(model, path):
    model.eval()
    torch.save(model.state_dict(), path)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=5)
    args = parser.parse_args()
    net = torch.nn.Linear(3, 3).cuda()
    net.half()  # error: AMP014
    train_model(model=net, device="cuda", epochs=args.epochs)
    student = torch.nn.Linear(3, 3).cuda().half()
    export(student, "student.pt")
