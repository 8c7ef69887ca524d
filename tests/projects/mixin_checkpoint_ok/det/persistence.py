import os

import torch


class ResumeMixin:
    def save_state(self):
        path = os.path.join(self.work_dir, f"model_{self.iteration:07d}.pth")
        torch.save({"model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(),
                    "scaler": self.scaler.state_dict(), "iteration": self.iteration}, path)

    def try_resume(self):
        path = os.path.join(self.work_dir, "last.pth")
        if os.path.exists(path):
            state = torch.load(path)
            self.model.load_state_dict(state["model"])
            self.optimizer.load_state_dict(state["optimizer"])
            self.scaler.load_state_dict(state["scaler"])
            self.iteration = state["iteration"]
