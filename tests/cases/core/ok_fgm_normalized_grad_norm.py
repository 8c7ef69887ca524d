"""Fast Gradient Method: the embedding perturbation is epsilon * grad / ||grad||, a ratio the
loss scale cancels out of, so reading the norm of still-scaled gradients there is fine."""
import torch


class FGM:
    def __init__(self, model):
        self.model = model
        self.backup = {}

    def attack(self, epsilon=1.0, emb_name="word_embeddings"):
        for name, param in self.model.named_parameters():
            if param.requires_grad and emb_name in name:
                self.backup[name] = param.data.clone()
                norm = torch.norm(param.grad)
                if norm != 0 and not torch.isnan(norm):
                    r_at = epsilon * param.grad / norm
                    param.data.add_(r_at)

    def restore(self, emb_name="word_embeddings"):
        for name, param in self.model.named_parameters():
            if name in self.backup:
                param.data = self.backup[name]
        self.backup = {}


def train_fn(model, loader, criterion, optimizer):
    scaler = torch.amp.GradScaler("cuda")
    fgm = FGM(model)
    for inputs, labels in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = criterion(model(inputs), labels)
        scaler.scale(loss).backward()
        fgm.attack()
        with torch.autocast("cuda", dtype=torch.float16):
            loss_adv = criterion(model(inputs), labels)
        scaler.scale(loss_adv).backward()
        fgm.restore()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1000)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
