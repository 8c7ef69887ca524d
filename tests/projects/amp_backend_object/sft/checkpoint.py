import torch


class CheckpointMixin:
    def save_checkpoint(self, path):
        torch.save({"model": self.model.state_dict(), "optimizer": self.optimizer.state_dict()}, path)  # error: AMP013

    def load_checkpoint(self, path):
        state = torch.load(path, map_location="cpu")
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
