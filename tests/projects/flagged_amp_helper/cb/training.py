import torch

from cb.amp import MixedPrecisionManager


def train(args, model, optimizer, scheduler, reader):
    amp = MixedPrecisionManager(args.amp)
    for batch in reader:
        with amp.context():
            loss = model(batch)
        amp.backward(loss)
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), float("inf"))  # error: AMP002
        amp.step(model, optimizer)
        print(grad_norm)
