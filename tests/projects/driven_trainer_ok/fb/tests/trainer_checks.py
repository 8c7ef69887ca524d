from fb.trainer import Trainer


def test_trainer_runs_an_epoch(config, model, loader):
    trainer = Trainer(config, model, loader)
    trainer.train()
    assert trainer.model is model
