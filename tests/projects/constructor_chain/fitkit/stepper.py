import torch


class Stepper:
    def __init__(self, net, opt, amp_scaler):
        self.net = net
        self.opt = opt
        self.amp_scaler = amp_scaler

    def step(self, x, y):
        self.opt.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = torch.nn.functional.mse_loss(self.net(x), y)
        self.amp_scaler.scale(loss).backward()
        self.amp_scaler.step(self.opt)  # error: AMP001
        return loss.detach()
