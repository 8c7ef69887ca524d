from gnn import Fitter, create_network


def main(cfg, batches):
    net = create_network(cfg)
    Fitter(cfg.lr).fit(net, batches)
