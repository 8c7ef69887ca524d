"""One iteration function for training and validation (nnU-Net style): validation calls it under
no_grad with ``do_backprop=False``, so the scaler branch never runs there."""
import torch


class Trainer:
    def __init__(self, network, optimizer, loss):
        self.network = network
        self.optimizer = optimizer
        self.loss = loss
        self.fp16 = True
        self.amp_grad_scaler = torch.amp.GradScaler("cuda")

    def run_iteration(self, data_generator, do_backprop=True):
        data, target = next(data_generator)
        self.optimizer.zero_grad()
        if self.fp16:
            with torch.autocast("cuda", dtype=torch.float16):
                l = self.loss(self.network(data), target)
            if do_backprop:
                self.amp_grad_scaler.scale(l).backward()
                self.amp_grad_scaler.step(self.optimizer)
                self.amp_grad_scaler.update()
        else:
            l = self.loss(self.network(data), target)
            if do_backprop:
                l.backward()
                self.optimizer.step()
        return l.detach().cpu().numpy()

    def run_epoch(self, tr_gen, val_gen, num_batches):
        self.network.train()
        for _ in range(num_batches):
            self.run_iteration(tr_gen, True)
        with torch.no_grad():
            self.network.eval()
            for _ in range(num_batches):
                self.run_iteration(val_gen, False)
            for _ in range(num_batches):
                self.run_iteration(val_gen, do_backprop=False)
