"""Models for running the collector (collect/) on a GPU with random data, as
measure_single_gpu.py builds them:

    PYTHONPATH=collect:validation python3 -m dtperf_collect --model collect_models:resnet50 \
        --device cuda --batch 256 -o resnet50.json
"""

from __future__ import annotations

from typing import Any, Callable, Tuple

import torch


def resnet50() -> Tuple[Any, Callable[[int], Tuple[Any, Any]]]:
    import torchvision.models as models

    def batch(n: int) -> Tuple[Any, Any]:
        return torch.randn(n, 3, 224, 224), torch.randint(0, 1000, (n,))
    return models.resnet50(num_classes=1000), batch


def gpt2_small() -> Tuple[Any, Callable[[int], Tuple[Any, Any]], Callable[[Any, Any], Any]]:
    from transformers import GPT2Config, GPT2LMHeadModel

    def batch(n: int) -> Tuple[Any, Any]:
        tokens = torch.randint(0, 50257, (n, 1024))
        return tokens, tokens

    def loss(output: Any, target: Any) -> Any:
        return torch.nn.functional.cross_entropy(output.logits.flatten(0, 1), target.flatten())
    return GPT2LMHeadModel(GPT2Config()), batch, loss
