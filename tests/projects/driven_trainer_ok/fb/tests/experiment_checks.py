from fb.experiment import Experiment


def test_experiment_without_eval(model, loader):
    experiment = Experiment(model, loader, accumulation_steps=2)
    experiment.run()
    assert experiment.step == len(loader)
