"""An AMP stage in one helper (its own local GradScaler, stepped and updated), then an fp32
L-BFGS stage in another with `optimizer.step(closure)`: the first helper's scaler is gone when
it returns, so the second stage's step bypasses nothing."""
import torch


def adam_stage(model, data):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    scaler = torch.amp.GradScaler("cuda")
    for x, y in data:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = ((model(x).float() - y) ** 2).mean()
        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    return {"optimizer": optimizer.state_dict(), "scaler": scaler.state_dict()}


def lbfgs_stage(model, x, y):
    optimizer = torch.optim.LBFGS(model.parameters(), lr=1.0, max_iter=20)

    def closure():
        optimizer.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        return loss

    for _ in range(50):
        optimizer.step(closure)


def main(model, data, x, y):
    state = adam_stage(model, data)
    lbfgs_stage(model, x, y)
    torch.save({"model": model.state_dict(), "adam": state}, "out.pt")
