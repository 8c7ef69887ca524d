"""A float16 autocast loss back-propagated without any GradScaler; the only "scaler" of the file
is sklearn's StandardScaler for the rewards, which is no evidence of loss scaling."""
import torch
import torch.nn.functional as F
from sklearn.preprocessing import StandardScaler


def train(model, loader, optimizer, args):
    for batch in loader:
        with torch.autocast("cuda", dtype=torch.float16, enabled=args.amp):
            rc = model(batch["chosen"])
            rr = model(batch["rejected"])
            loss = -F.logsigmoid(rc - rr).mean()
        loss.backward()  # error: AMP106
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)


def standardise(rewards):
    scaler = StandardScaler()
    scaler.fit(rewards[:, None])
    return scaler
