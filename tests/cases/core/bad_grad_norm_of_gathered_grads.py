"""The norm of all gradients gathered into one tensor (torch.cat of every .grad) is read before
unscale_, through a utility called by a method whose scaler parameter is annotated with a string
naming an alias: the utility is right wherever it runs after ``unscale_``, so its call is reported."""
import torch


def grad_norm(parameters):
    return torch.norm(torch.cat([p.grad.view(-1) for p in parameters if p.grad is not None]), p=2)


class Trainer:
    def _clip(self, max_norm, optimizer, scaler: "AMPScaler"):
        if max_norm > 0:
            scaler.unscale_(optimizer)
            return torch.nn.utils.clip_grad_norm_(self.model.parameters(), max_norm)
        return grad_norm(self.model.parameters())  # error: AMP002

    def optimize(self, loss, optimizer, scaler: "AMPScaler", max_norm=0.0):
        scaler.scale(loss).backward()
        norm = self._clip(max_norm, optimizer, scaler)
        scaler.step(optimizer)
        scaler.update()
        return norm
