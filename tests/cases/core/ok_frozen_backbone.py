import torch


def finetune(backbone, head, optimizer, loader):
    scaler = torch.amp.GradScaler("cuda")
    backbone.eval()
    for p in backbone.parameters():
        p.requires_grad_(False)
    head.train()
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            with torch.no_grad():
                feats = backbone(x)
            loss = torch.nn.functional.cross_entropy(head(feats), y)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
