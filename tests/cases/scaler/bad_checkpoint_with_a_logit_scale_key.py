"""A dual-encoder trainer (CLIP-style learnable temperature) saves a checkpoint whose keys include
``logit_scale``: a model parameter, not the GradScaler's state, which the checkpoint leaves out."""
import math

import torch
from torch import nn


class DualEncoderTrainer:
    def __init__(self, query_enc, doc_enc, lr):
        self.query_enc = query_enc
        self.doc_enc = doc_enc
        self.logit_scale = nn.Parameter(torch.tensor(math.log(1 / 0.05)))
        params = list(query_enc.parameters()) + list(doc_enc.parameters()) + [self.logit_scale]
        self.optimizer = torch.optim.AdamW(params, lr=lr)
        self.scaler = torch.amp.GradScaler("cuda")

    def train_epoch(self, loader, loss_fn):
        for q_in, d_in in loader:
            self.optimizer.zero_grad(set_to_none=True)
            with torch.autocast("cuda", dtype=torch.float16):
                loss = loss_fn(self.query_enc(**q_in), self.doc_enc(**d_in), self.logit_scale.exp())
            self.scaler.scale(loss).backward()
            self.scaler.step(self.optimizer)
            self.scaler.update()

    def save(self, path, epoch):
        state = {}
        state["query_encoder"] = self.query_enc.state_dict()
        state["doc_encoder"] = self.doc_enc.state_dict()
        state["logit_scale"] = self.logit_scale.detach().cpu()
        state["optimizer"] = self.optimizer.state_dict()
        state["epoch"] = epoch
        torch.save(state, path)  # error: AMP013
