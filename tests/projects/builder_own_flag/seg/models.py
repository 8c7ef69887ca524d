import torch


def build_model(cfg, net_cls):
    model = net_cls(cfg.encoder, cfg.num_classes)
    if cfg.channels_last:
        model = model.to(memory_format=torch.channels_last)
    if cfg.fp16_weights:
        # halves the parameter memory on the 16 GB cards
        model = model.half()  # error: AMP014
    return model.cuda()
