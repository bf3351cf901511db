"""Measures single-GPU training step times with PyTorch and writes them as a dtperf.runs/1
file, to check dtperf's compute model on a GPU against what the same GPU does.

    python3 validation/measure_single_gpu.py -o runs.json [--quick]

Models are built from code with random weights (torchvision's ResNet-50 v1.5, ResNet-101,
VGG-16, ViT-B/16; GPT-2 small from transformers' GPT2Config), so nothing is downloaded.
Inputs are random tensors already on the GPU, so no data loading is timed. Each
configuration: channels-last images, `--warmup` untimed steps (cuDNN autotuning on), then
`--steps` steps timed between two CUDA events; iteration_ms is their mean. A step is
forward, loss, backward and the optimizer's step with zeroed gradients. Dtypes: fp32 (TF32
off for matmuls and convolutions), tf32 (on), fp16 and bf16 as autocast mixed precision
(fp16 with a gradient scaler), parameters in fp32.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from typing import Any, Callable, Tuple

import torch

BatchFn = Callable[[int, torch.device], Tuple[Any, Any]]
LossFn = Callable[[Any, Any, Any], Any]
Built = Tuple[Any, BatchFn, LossFn]


def vision(name: str) -> Built:
    import torchvision.models as models
    build = {"resnet50": models.resnet50, "resnet101": models.resnet101, "vgg16": models.vgg16,
             "vit-b16": models.vit_b_16}[name]
    model = build(num_classes=1000)

    def batch(n: int, device: torch.device) -> Tuple[Any, Any]:
        images = torch.randn(n, 3, 224, 224, device=device).contiguous(memory_format=torch.channels_last)
        return images, torch.randint(0, 1000, (n,), device=device)

    def loss(model: Any, inputs: Any, target: Any) -> Any:
        return torch.nn.functional.cross_entropy(model(inputs), target)
    return model, batch, loss


def gpt2_small(_: str) -> Built:
    from transformers import GPT2Config, GPT2LMHeadModel
    model = GPT2LMHeadModel(GPT2Config())  # 12 layers, d 768, 1024 positions, 50,257 tokens

    def batch(n: int, device: torch.device) -> Tuple[Any, Any]:
        tokens = torch.randint(0, 50257, (n, 1024), device=device)
        return tokens, tokens

    def loss(model: Any, inputs: Any, target: Any) -> Any:
        return model(input_ids=inputs, labels=target).loss
    return model, batch, loss


# (dtperf model, builder, optimizer, batch per GPU, dtypes)
CONFIGS: list[tuple[str, Callable[[str], Built], str, int, list[str]]] = [
    ("resnet50", vision, "sgd-momentum", 256, ["fp32", "tf32", "fp16", "bf16"]),
    ("resnet101", vision, "sgd-momentum", 128, ["tf32", "bf16"]),
    ("vgg16", vision, "sgd-momentum", 128, ["tf32", "bf16"]),
    ("vit-b16", vision, "adam", 128, ["tf32", "bf16"]),
    ("gpt2-small", gpt2_small, "adam", 8, ["tf32", "bf16"]),
]


def training_step(built: Built, optimizer_name: str, batch_size: int, dtype: str,
                  device: torch.device) -> Callable[[], None]:
    """One training step of `built` on the GPU, ready to call: TF32 as `dtype` says (off for
    fp32), cuDNN autotuning on, channels-last, fixed random inputs, autocast for fp16/bf16
    (fp16 with a gradient scaler). The step holds the model and its state until dropped."""
    torch.backends.cuda.matmul.allow_tf32 = dtype != "fp32"
    torch.backends.cudnn.allow_tf32 = dtype != "fp32"
    torch.backends.cudnn.benchmark = True
    model, make_batch, loss_fn = built
    model = model.to(device).to(memory_format=torch.channels_last)
    if optimizer_name == "adam":
        optimizer: Any = torch.optim.Adam(model.parameters(), lr=1e-4)
    else:
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    amp = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(dtype)
    scaler = torch.amp.GradScaler("cuda", enabled=dtype == "fp16")
    inputs, target = make_batch(batch_size, device)

    def one_step() -> None:
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=amp or torch.float32, enabled=amp is not None):
            loss = loss_fn(model, inputs, target)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    return one_step


def timed_ms(one_step: Callable[[], None], warmup: int, steps: int) -> float:
    """Mean milliseconds per step of `steps` steps between two CUDA events, after `warmup`."""
    for _ in range(warmup):
        one_step()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    for _ in range(steps):
        one_step()
    stop.record()
    torch.cuda.synchronize()
    return float(start.elapsed_time(stop)) / steps


def step_ms(name: str, builder: Callable[[str], Built], optimizer_name: str, batch_size: int, dtype: str,
            warmup: int, steps: int, device: torch.device) -> float:
    one_step = training_step(builder(name), optimizer_name, batch_size, dtype, device)
    ms = timed_ms(one_step, warmup, steps)
    del one_step
    torch.cuda.empty_cache()
    return ms


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", required=True)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--quick", action="store_true", help="ResNet-50 only, 2 + 5 steps")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("measure_single_gpu: no CUDA device", file=sys.stderr)
        return 2
    device = torch.device("cuda")
    gpu = torch.cuda.get_device_name(device)
    configs = CONFIGS[:1] if args.quick else CONFIGS
    warmup, steps = (2, 5) if args.quick else (args.warmup, args.steps)
    today = datetime.date.today().isoformat()
    runs: list[dict[str, Any]] = []
    for name, builder, optimizer_name, batch_size, dtypes in configs:
        for dtype in dtypes:
            ms = step_ms(name, builder, optimizer_name, batch_size, dtype, warmup, steps, device)
            print(f"{name} {dtype} batch {batch_size}: {ms:.2f} ms/step, {1000 * batch_size / ms:.1f} samples/s",
                  flush=True)
            runs.append({
                "label": f"{name}-{dtype}", "model": name, "scheme": "all-reduce", "nodes": 1, "gpus_per_node": 1,
                "batch_per_gpu": batch_size, "dtype": dtype, "optimizer": optimizer_name,
                "iteration_ms": round(ms, 3),
                "source": (f"validation/measure_single_gpu.py on one {gpu}, {today}: PyTorch {torch.__version__}, "
                           f"CUDA {torch.version.cuda}, cuDNN {torch.backends.cudnn.version()}; mean of {steps} "
                           f"steps after {warmup}"),
            })
    with open(args.output, "w") as f:
        json.dump({"schema": "dtperf.runs/1",
                   "description": f"Single-GPU training step times measured on one {gpu} with PyTorch "
                                  "(validation/measure_single_gpu.py): random weights and inputs on the GPU, "
                                  "channels-last images, autocast for fp16/bf16.",
                   "runs": runs}, f, indent=1)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
