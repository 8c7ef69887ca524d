import torch
import torch.nn as nn
import torch.nn.functional as F


def fit_probe(features, labels, num_classes):
    head = nn.Linear(features.size(1), num_classes).cuda()
    optimizer = torch.optim.LBFGS(head.parameters(), lr=1.0)
    scaler = torch.amp.GradScaler("cuda")

    def closure():
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = F.cross_entropy(head(features), labels)
        scaler.scale(loss).backward()
        return loss

    for _ in range(10):
        scaler.step(optimizer, closure)  # error: AMP011
        scaler.update()
    return head


def main(backbone, loader):
    backbone = backbone.cuda().eval()
    with torch.no_grad():
        feats, labels = zip(*[(backbone(x.cuda()), y.cuda()) for x, y in loader])
    return fit_probe(torch.cat(feats), torch.cat(labels), 1000)
