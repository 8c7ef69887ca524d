import torch


class Fitter:
    def __init__(self, lr):
        self.lr = lr
        self.scaler = torch.amp.GradScaler("cuda")

    def fit(self, net, batches):
        optim = torch.optim.Adam(net.parameters(), lr=self.lr)
        for x, y in batches:
            optim.zero_grad()
            with torch.autocast("cuda", dtype=torch.float16):
                loss = torch.nn.functional.binary_cross_entropy_with_logits(net(x), y)
            self.scaler.scale(loss).backward()
            self.scaler.step(optim)
            self.scaler.update()
        return net
