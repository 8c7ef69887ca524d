from gan import GANTrainer


def main(net_g, net_d, cfg, loader):
    trainer = GANTrainer(net_g, net_d, cfg)
    for x, real in loader:
        trainer.train_step(x, real)
