"""The validation harness's models: small enough for 2 cores, large enough that their
gradients take real time on a 100 Mbit/s - 1 Gbit/s link."""

import torch
from torch import nn


class Mlp(nn.Module):
    """About 1.2 M parameters (4.7 MB of fp32 gradients) in five layers."""

    def __init__(self, width=512):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(256, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(),
                                  nn.Linear(width, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(),
                                  nn.Linear(width, 64))

    def forward(self, x):
        return self.body(x)


def build(name="mlp"):
    if name != "mlp":
        raise SystemExit(f"unknown harness model '{name}'")
    torch.manual_seed(0)
    return Mlp(), lambda b: (torch.randn(b, 256), torch.randn(b, 64))


def mlp():
    """For dtperf_collect: --model models:mlp."""
    return build("mlp")
