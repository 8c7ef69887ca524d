"""The deprecated autocast takes ``enabled`` first: the device or a dtype there is a bug (AMP102);
the deprecated name itself is AMP101."""

import torch


def forward(model, x, use_amp):
    with torch.cuda.amp.autocast("cuda"):  # error: AMP101, AMP102
        a = model(x)
    with torch.cpu.amp.autocast(torch.bfloat16):  # error: AMP101, AMP102
        b = model(x)
    with torch.cuda.amp.autocast(True):  # error: AMP101
        c = model(x)
    with torch.cuda.amp.autocast(use_amp, torch.float16):  # error: AMP101
        d = model(x)
    with torch.cpu.amp.autocast(enabled=use_amp, dtype=torch.bfloat16):  # error: AMP101
        e = model(x)
    return a, b, c, d, e
