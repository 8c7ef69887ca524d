from seg.factory import make_network, make_optimizer, make_scaler
from seg.loop import fit_epoch


def main(opts, batches):
    net = make_network(opts)
    optimizer = make_optimizer(net, opts)
    scaler = make_scaler(opts)
    for _ in range(opts.epochs):
        fit_epoch(net, optimizer, batches, scaler)
