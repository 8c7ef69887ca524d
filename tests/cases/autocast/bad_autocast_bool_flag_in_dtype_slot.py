"""A bool flag passed positionally to ``torch.autocast`` lands in the ``dtype`` slot (TypeError
when the region is entered): a parameter annotated ``bool``, a name bound to a comparison. A
parameter without evidence (it may hold a dtype) and a flag built with ``and`` (its value is an
operand's) are not reported."""
import torch


def validate(model, loader, amp: bool):
    for x in loader:
        with torch.autocast("cuda", amp):  # error: AMP102
            model(x)


def evaluate(model, loader, device):
    on_gpu = device == "cuda"
    for x in loader:
        with torch.autocast("cuda", on_gpu):  # error: AMP102
            model(x)


def predict(model, loader, dtype):
    for x in loader:
        with torch.autocast("cuda", dtype):
            model(x)


def score(model, loader, args):
    use_amp = args.amp and torch.cuda.is_available()
    for x in loader:
        with torch.autocast("cuda", use_amp):
            model(x)
