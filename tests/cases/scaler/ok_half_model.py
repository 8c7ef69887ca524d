from copy import deepcopy

import torch
import torch.nn.functional as F


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 2)

    def forward(self, x):
        return self.fc(x)


def train(loader, teacher, epochs, fp16):
    model = Net().cuda()
    model.half().float()  # round the weights through fp16, keep fp32 parameters
    if fp16:
        model.half()  # pure fp16 mode, chosen instead of AMP
    ema = deepcopy(model).half()
    teacher.half()
    teacher.requires_grad_(False)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    scaler = torch.amp.GradScaler("cuda", enabled=not fp16)
    for epoch in range(epochs):
        for x, y in loader:
            x = x.half()
            optimizer.zero_grad()
            with torch.autocast("cuda", dtype=torch.float16):
                loss = F.cross_entropy(model(x), y) + F.mse_loss(model(x), teacher(x))
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        ckpt = {"model": deepcopy(model).half(), "ema": ema, "optimizer": optimizer.state_dict(), "scaler": scaler.state_dict()}
        torch.save(ckpt, "last.pt")
    model.half()  # after training, for export
    torch.save(model, "final.pt")


@torch.no_grad()
def predict(model, x):
    model.half()
    return model(x.half())


def distill(student, teacher, loader):
    teacher.half()
    teacher.eval()
    optimizer = torch.optim.SGD(student.parameters(), lr=0.01)
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            with torch.no_grad():
                soft = teacher(x)
            loss = F.mse_loss(student(x), soft)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()


def train_with_fp16_feature_extractor(net, extractor, loader):
    """The converted module is called in the loop, but the optimizer holds another module."""
    extractor.half()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.01)
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        optimizer.zero_grad()
        feats = extractor(x.half()).float()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = F.cross_entropy(net(feats), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
