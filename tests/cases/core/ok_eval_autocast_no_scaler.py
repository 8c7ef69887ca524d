import torch


@torch.inference_mode()
def evaluate(model, loader, device="cuda"):
    model.eval()
    correct = total = 0
    for x, y in loader:
        with torch.autocast(device, dtype=torch.float16):
            logits = model(x.to(device))
        correct += (logits.argmax(-1) == y.to(device)).sum().item()
        total += y.numel()
    return correct / total


def validate(model, loader):
    model.eval()
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
        losses = [torch.nn.functional.cross_entropy(model(x), y).item() for x, y in loader]
    model.train()
    return sum(losses) / len(losses)
