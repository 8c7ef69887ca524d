import logging

logger = logging.getLogger(__name__)


class Hook:
    def after_train_iter(self, trainer, **kwargs):
        pass


class LossScaleHook(Hook):
    """Updates the dynamic loss scale after every optimizer step and reports it."""

    def after_train_iter(self, trainer, **kwargs):
        trainer.scaler.update()
        logger.debug("loss_scale %.1f", trainer.scaler.get_scale())


class ThroughputHook(Hook):
    def after_train_iter(self, trainer, ntokens=0, **kwargs):
        logger.debug("tokens %d", ntokens)
