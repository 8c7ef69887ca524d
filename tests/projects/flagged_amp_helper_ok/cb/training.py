from cb.amp import MixedPrecisionManager


def train(args, model, optimizer, scheduler, reader):
    amp = MixedPrecisionManager(args.amp)
    for batch in reader:
        with amp.context():
            loss = model(batch)
        amp.backward(loss)
        amp.step(model, optimizer)
