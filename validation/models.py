"""The validation harness's models: small enough for 2 cores, large enough that their
gradients take real time on a 100 Mbit/s - 1 Gbit/s link."""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn

# A model and its batches: batch_fn(batch) -> (inputs, target).
Built = tuple[nn.Module, Callable[[int], tuple[torch.Tensor, torch.Tensor]]]


class Mlp(nn.Module):
    """About 1.2 M parameters (4.7 MB of fp32 gradients) in five layers."""

    def __init__(self, width: int = 512) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(256, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(),
                                  nn.Linear(width, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(),
                                  nn.Linear(width, 64))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x)


def build(name: str = "mlp") -> Built:
    if name != "mlp":
        raise SystemExit(f"unknown harness model '{name}'")
    torch.manual_seed(0)
    return Mlp(), lambda b: (torch.randn(b, 256), torch.randn(b, 64))


def mlp() -> Built:
    """For dtperf_collect: --model models:mlp."""
    return build("mlp")
