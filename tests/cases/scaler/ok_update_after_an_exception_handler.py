"""Exception handlers that skip the update with the step (``continue``), re-raise, or guard code
that does not hold the step: no AMP006."""
import logging

import torch

log = logging.getLogger(__name__)


def skip_batch(model, loader, optimizer, scaler):
    for x in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x)
        try:
            optimizer.zero_grad()
            scaler.scale(loss).backward()
        except torch.cuda.OutOfMemoryError:
            torch.cuda.empty_cache()
            continue
        scaler.step(optimizer)
        scaler.update()


def reraise_with_finally(model, loader, optimizer, scaler):
    for x in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x)
        try:
            optimizer.zero_grad()
            scaler.scale(loss).backward()
            scaler.step(optimizer)
        except Exception:
            log.exception("training step failed")
            raise
        finally:
            log.debug("step done")
        scaler.update()


def logging_guarded(model, loader, optimizer, scaler):
    for x in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        try:
            log.info("loss %f", loss.item())
        except ValueError:
            pass
        scaler.update()


def data_retry(model, loader, optimizer, scaler):
    it = iter(loader)
    for _ in range(1000):
        try:
            x = next(it)
        except StopIteration:
            it = iter(loader)
            x = next(it)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
