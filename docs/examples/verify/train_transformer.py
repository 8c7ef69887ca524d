"""A small transformer-block sequence classifier with three AMP mistakes.

    amplint verify docs/examples/verify/train_transformer.py --device cpu

amplint reports AMP003 (``optimizer.step()`` bypasses the GradScaler), AMP015 (the logged loss
is the scaled one) and AMP201 (the validation loss goes through the scaler); `verify` fixes each
with amplint's own fix and measures whether its failure mode shows on ``make_problem``'s task.
"""

import torch
import torch.nn.functional as F
from torch import nn

VOCAB, CLASSES, LENGTH, WIDTH = 8, 4, 12, 32


class TinyTransformer(nn.Module):
    """Token embedding, one transformer encoder block, mean pooling, a linear head."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, WIDTH)
        self.block = nn.TransformerEncoderLayer(WIDTH, nhead=4, dim_feedforward=64, dropout=0.0, batch_first=True)
        self.head = nn.Linear(WIDTH, CLASSES)

    def forward(self, tokens):
        return self.head(self.block(self.embed(tokens)).mean(dim=1))


def make_problem(device, seed):
    """Classify a sequence by which of the first CLASSES tokens it contains most often."""
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed + 1)
    batches = []
    for _ in range(48):
        tokens = torch.randint(0, VOCAB, (32, LENGTH), generator=g)
        counts = torch.stack([(tokens == c).sum(1) for c in range(CLASSES)], 1).float()
        labels = (counts + 0.1 * torch.rand(counts.shape, generator=g)).argmax(1)
        batches.append((tokens.to(device), labels.to(device)))
    model = TinyTransformer().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    return {"model": model, "optimizer": optimizer, "batches": batches}


def validate(model, batches, device, scaler):
    model.eval()
    losses = []
    with torch.no_grad():
        for tokens, labels in batches:
            with torch.autocast(device_type=device, dtype=torch.float16):
                val_loss = F.cross_entropy(model(tokens), labels)
            losses.append(scaler.scale(val_loss).item())
    model.train()
    return sum(losses) / len(losses)


def train(model, optimizer, batches, device):
    scaler = torch.amp.GradScaler(device, init_scale=1024.0)
    train_batches, val_batches = batches[:-8], batches[-8:]
    losses, val_losses = [], []
    model.train()
    for epoch in range(2):
        for tokens, labels in train_batches:
            optimizer.zero_grad(set_to_none=True)
            with torch.autocast(device_type=device, dtype=torch.float16):
                loss = F.cross_entropy(model(tokens), labels)
            scaled = scaler.scale(loss)
            scaled.backward()
            optimizer.step()
            scaler.update()
            losses.append(scaled.item())
        val_losses.append(validate(model, val_batches, device, scaler))
    return {"loss": losses, "val_loss": val_losses}
