"""A helper module whose only import is ``from config import *``: ``torch`` comes from the star
import (a Kaggle-style split), and the training function still clips scaled gradients."""
from config import *


def train_fn(train_loader, model, criterion, optimizer, max_grad_norm):
    scaler = torch.amp.GradScaler("cuda")
    for inputs, labels in train_loader:
        with torch.autocast("cuda", dtype=torch.float16):
            y_preds = model(inputs)
        loss = criterion(y_preds.view(-1, 1), labels.view(-1, 1))
        scaler.scale(loss).backward()
        grad_norm = nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)  # error: AMP002
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
