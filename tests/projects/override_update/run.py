from asr.noam import NoamTrainer


def main(model, optimizer, loader):
    trainer = NoamTrainer(model, optimizer, d_model=512)
    for feats, targets in loader:
        trainer.train_step(feats, targets)
