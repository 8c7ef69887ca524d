"""Two optimizers (dense and sparse) stepped by a bundle that does the per-optimizer half of the
protocol; the trainer updates the scale once after the bundle's step."""
import torch


class OptimizerBundle:
    order = ("dense", "sparse")

    def __init__(self, model, cfg, scaler):
        sparse = [p for n, p in model.named_parameters() if n.startswith("embeddings.")]
        dense = [p for n, p in model.named_parameters() if not n.startswith("embeddings.")]
        self.params = {"dense": dense, "sparse": sparse}
        self.optimizers = {
            "dense": torch.optim.Adagrad(dense, lr=cfg.dense_lr),
            "sparse": torch.optim.SparseAdam(sparse, lr=cfg.sparse_lr),
        }
        self.scaler = scaler
        self.max_grad_norm = cfg.max_grad_norm

    def zero_grad(self):
        for opt in self.optimizers.values():
            opt.zero_grad(set_to_none=True)

    def step(self):
        norms = {}
        for name in self.order:
            opt = self.optimizers[name]
            if name == "dense":
                self.scaler.unscale_(opt)
                norms[name] = float(torch.nn.utils.clip_grad_norm_(self.params[name], self.max_grad_norm))
            self.scaler.step(opt)
        return norms
