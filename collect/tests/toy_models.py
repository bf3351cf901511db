"""Small models for the collector's tests: a CNN and an MLP, with their batches."""

import torch
from torch import nn


class SmallCnn(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.head = nn.Linear(32, classes)

    def forward(self, x):
        return self.head(torch.flatten(self.features(x), 1))


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 8))

    def forward(self, x):
        return self.body(x)


def cnn():
    torch.manual_seed(0)
    return SmallCnn(), lambda b: (torch.randn(b, 3, 32, 32), torch.randint(0, 10, (b,)))


def mlp():
    torch.manual_seed(0)
    return Mlp(), lambda b: (torch.randn(b, 256), torch.randn(b, 8))
