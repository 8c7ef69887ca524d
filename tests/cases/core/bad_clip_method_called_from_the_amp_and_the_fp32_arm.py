"""A SpeechBrain-style ``Brain``: ``check_gradients`` clips, and both the AMP arm (inside autocast,
after the scaled backward) and the fp32 arm call it. The AMP call clips scaled gradients; the
fp32 call is fine. One observation per calling context: the fp32 one does not hide the other."""
import torch


class Brain:
    def __init__(self, modules, optimizer, auto_mix_prec=False, max_grad_norm=5.0):
        self.modules = modules
        self.optimizer = optimizer
        self.max_grad_norm = max_grad_norm
        self.auto_mix_prec = auto_mix_prec
        if self.auto_mix_prec:
            self.scaler = torch.amp.GradScaler("cuda")

    def fit_batch(self, batch):
        if self.auto_mix_prec:
            with torch.autocast("cuda", dtype=torch.float16):
                loss = self.modules(batch)
                self.scaler.scale(loss).backward()  # error: AMP105
                if self.check_gradients(loss):
                    self.scaler.step(self.optimizer)
                self.optimizer.zero_grad()
                self.scaler.update()
        else:
            loss = self.modules(batch)
            loss.backward()
            if self.check_gradients(loss):
                self.optimizer.step()
            self.optimizer.zero_grad()
        return loss.detach()

    def check_gradients(self, loss):
        if not torch.isfinite(loss):
            return False
        torch.nn.utils.clip_grad_norm_(self.modules.parameters(), self.max_grad_norm)  # error: AMP002
        return True
