from fb.trainer import Trainer


def main(config, model, loader, only_val=False):
    if config.seed < 0:
        config.seed = 0
    trainer = Trainer(config, model, loader)
    if not only_val:
        trainer.train()
