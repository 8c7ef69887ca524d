"""The tiny deterministic problem every fixture trains on.

A 16-32-32-1 tanh MLP regressing a fixed smooth target, as in the probes of
``amp-semantics.md``: small enough that a fixture pair runs in well under a second on one
CPU core, and deterministic (seeded generators, one thread, deterministic algorithms).

Fixtures define ``train(model, optimizer, batches, device)``; run one standalone with
``python fixtures/AMP001/bad.py [cpu|cuda]``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import torch

IN_FEATURES = 16
HIDDEN = 32


def make_model(seed: int = 0, device: str = "cpu") -> torch.nn.Module:
    torch.manual_seed(seed)
    model = torch.nn.Sequential(
        torch.nn.Linear(IN_FEATURES, HIDDEN),
        torch.nn.Tanh(),
        torch.nn.Linear(HIDDEN, HIDDEN),
        torch.nn.Tanh(),
        torch.nn.Linear(HIDDEN, 1),
    )
    return model.to(device)


def make_batches(device: str = "cpu", n_batches: int = 40, batch_size: int = 32, seed: int = 1,
                 scale: float = 4.0) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Inputs ~ N(0, 1); target = ``scale`` * tanh(x @ w) + 2 (the loss starts near 10).

    Plain SGD (lr 0.05) brings it to about 0.02 in 200 steps; that is the margin the harness
    needs to tell a loop that trains from one that does not.
    """
    g = torch.Generator().manual_seed(seed)
    w = torch.randn(IN_FEATURES, 1, generator=g) / IN_FEATURES**0.5
    batches = []
    for _ in range(n_batches):
        x = torch.randn(batch_size, IN_FEATURES, generator=g)
        y = scale * torch.tanh(x @ w) + 2.0
        batches.append((x.to(device), y.to(device)))
    return batches


def make_optimizer(kind: str, params, lr: float | None = None) -> torch.optim.Optimizer:
    if kind == "sgd":
        return torch.optim.SGD(params, lr=0.05 if lr is None else lr)
    if kind == "adam":
        return torch.optim.Adam(params, lr=1e-2 if lr is None else lr)
    if kind == "adam-fused":
        return torch.optim.Adam(params, lr=1e-2 if lr is None else lr, fused=True)
    raise ValueError(f"unknown optimizer {kind!r}")


def set_deterministic(device: str) -> None:
    """One CPU thread and deterministic algorithms (warn only where there is no such kernel).

    The first ``use_deterministic_algorithms`` call of a process imports a large part of torch
    (about 2 s); `amplint verify` makes it once in the parent, so the forked runs skip it.
    """
    if device == "cpu":
        torch.set_num_threads(1)
    if not (torch.are_deterministic_algorithms_enabled() and torch.is_deterministic_algorithms_warn_only_enabled()):
        torch.use_deterministic_algorithms(True, warn_only=True)


def default_device() -> str:
    return "cuda" if torch.cuda.is_available() else "cpu"


def demo(train: Callable[..., Any], optimizer: str = "sgd", epochs: int = 1) -> Any:
    """Run a fixture's ``train`` on the standard problem and print what it returned."""
    device = sys.argv[1] if len(sys.argv) > 1 else default_device()
    set_deterministic(device)
    model = make_model(device=device)
    opt = make_optimizer(optimizer, model.parameters())
    batches = make_batches(device)
    history = train(model, opt, batches, device)
    if isinstance(history, dict):
        for key, values in history.items():
            if isinstance(values, list) and values:
                print(f"{key}: first {values[0]:.5g}, last {values[-1]:.5g} ({len(values)} values)")
            else:
                print(f"{key}: {values}")
    else:
        print(history)
    return history
