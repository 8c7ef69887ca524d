"""A long library training function: many unrelated switches (device, logging, sample counts,
callback arguments) before and inside the loop, a backend flag tested around the scaler's
constructor and again around the training step, and a clip on still-scaled gradients. The paths
outnumber what the analysis keeps: it forgets the unrelated switches first (`num_examples`,
`clamp_outputs` and `timestamp_logs` are not AMP switches), so the path to the clip stays exact."""
import inspect
import os
import time

import torch


def train(model, optimizer, loader, valid_loader, FLAGS, callbacks=(), num_examples=None,
          num_valid_examples=None, num_test_examples=None, rank=0):
    device = torch.device("cpu")
    if FLAGS.torch:
        for cb in callbacks:
            if hasattr(cb, "attach"):
                cb.attach(model)
    if FLAGS.keras:
        model.compile()
    if num_examples:
        steps_per_epoch = -(-num_examples // FLAGS.batch_size)
    else:
        steps_per_epoch = len(loader)
    if num_valid_examples:
        valid_steps = -(-num_valid_examples // FLAGS.eval_batch_size)
    else:
        valid_steps = None
    if num_test_examples:
        print("test examples", num_test_examples)
    if FLAGS.sample_weights:
        print("weighted sampling")
    if FLAGS.clamp_outputs:
        print("outputs clamped to", FLAGS.clamp_range)
    if FLAGS.timestamp_logs:
        print("logging with timestamps from", time.time())
    if rank == 0:
        print("steps per epoch", steps_per_epoch, "valid steps", valid_steps)
    if "SHOW" in os.environ:
        print(model)
    if FLAGS.torch:
        if torch.cuda.is_available():
            device = torch.device("cuda", rank)
        if FLAGS.distributed:
            model = torch.nn.parallel.DistributedDataParallel(model.to(device), device_ids=[rank])
        elif FLAGS.num_gpus > 1:
            model = torch.nn.DataParallel(model).to(device)
        else:
            model = model.to(device)
    if FLAGS.profile:
        start = time.time()
    else:
        start = None

    scaler = None
    if FLAGS.torch:
        if FLAGS.fp16:
            scaler = torch.amp.GradScaler("cuda")
    for epoch in range(FLAGS.num_epochs):
        for cb in callbacks:
            if hasattr(cb, "on_epoch_begin"):
                args = inspect.getfullargspec(cb.on_epoch_begin).args
                kwargs = {}
                if "num_examples" in args:
                    kwargs["num_examples"] = num_examples
                if "sample_weights" in args:
                    kwargs["sample_weights"] = FLAGS.sample_weights
                cb.on_epoch_begin(epoch, **kwargs)
        for step, (x, y) in enumerate(loader):
            if not FLAGS.torch:
                loss = model.train_on_batch(x, y)
            else:
                x, y = x.to(device), y.to(device)
                if scaler is None:
                    loss = torch.nn.functional.mse_loss(model(x), y)
                    loss.backward()
                else:
                    with torch.autocast("cuda", dtype=torch.float16):
                        loss = torch.nn.functional.mse_loss(model(x), y)
                    scaler.scale(loss).backward()
                if (step + 1) % FLAGS.acc_steps == 0:
                    if FLAGS.clip_gradients > 0:
                        torch.nn.utils.clip_grad_norm_(model.parameters(), FLAGS.clip_gradients)  # error: AMP002
                    if scaler is None:
                        optimizer.step()
                    else:
                        scaler.step(optimizer)
                        scaler.update()
                    optimizer.zero_grad()
            if rank == 0 and step % FLAGS.log_every == 0:
                print(epoch, step, float(loss))
            for cb in callbacks:
                if hasattr(cb, "on_batch_end"):
                    args = inspect.getfullargspec(cb.on_batch_end).args
                    kwargs = {}
                    if "num_examples" in args:
                        kwargs["num_examples"] = num_examples
                    if "sample_weights" in args:
                        kwargs["sample_weights"] = FLAGS.sample_weights
                    cb.on_batch_end(step, **kwargs)
        if num_valid_examples and valid_loader is not None:
            print("validating on", num_valid_examples, "examples")
        if num_test_examples:
            print("testing on", num_test_examples, "examples")
        if FLAGS.sample_weights:
            print("resampling weights")
        if FLAGS.clamp_outputs:
            print("clamp range", FLAGS.clamp_range)
        if num_examples:
            print("epoch", epoch, "done:", num_examples, "examples")
        if FLAGS.timestamp_logs:
            print("epoch end", time.time())
    if start is not None:
        print("took", time.time() - start)
    return model
