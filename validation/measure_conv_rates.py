"""Rates of the convolutions of ResNet-50 and VGG-16, each timed alone on one GPU, pass by
pass (forward, input gradient, weight gradient), to give the compute model measured rates
for convolutions by shape and dtype (the single-GPU ResNets and VGG-16 are predicted too
fast on an H200: docs/VALIDATION.md).

    python3 validation/measure_conv_rates.py -o conv-rates.json [--dtype bf16 ...]

Shapes: every distinct convolution of torchvision's ResNet-50 (v1.5: the stride on the
3x3) at batch 256 and of VGG-16 at batch 128, on 224 x 224 images, channels-last as
measure_single_gpu.py trains them. Dtypes: fp32 (TF32 off), tf32 (on), fp16, bf16, the
tensors made in that dtype (what autocast hands cuDNN). cuDNN's autotuner is on, as in
training: each pass is run `--warmup` times (the first tunes), then `--iterations` times
between two CUDA events; time_ms is their mean, `kernels` the kernels one call ran. FLOPs:
2 N H_out W_out C_out C_in k^2 per pass.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from typing import Any, Callable

import torch
import torch.nn.functional as F

from measure_op_rates import kernel_names
from measure_single_gpu import timed_ms

DTYPES = {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}

# (model, batch, input side, C_in, C_out, kernel, stride, count in the model)
Shape = tuple[str, int, int, int, int, int, int, int]


def resnet50_shapes() -> list[Shape]:
    shapes: list[Shape] = [("resnet50", 256, 224, 3, 64, 7, 2, 1)]
    side, c_in = 56, 64
    for width, blocks in ((64, 3), (128, 4), (256, 6), (512, 3)):
        out = 4 * width
        stride = 1 if width == 64 else 2
        shapes += [("resnet50", 256, side, c_in, width, 1, 1, 1),  # first block's 1x1 on the wider input
                   ("resnet50", 256, side, width, width, 3, stride, 1),  # first block's 3x3, strided
                   ("resnet50", 256, side, c_in, out, 1, stride, 1)]  # downsample
        side //= stride
        shapes += [("resnet50", 256, side, width, out, 1, 1, blocks),  # every block's expanding 1x1
                   ("resnet50", 256, side, out, width, 1, 1, blocks - 1),  # later blocks' reducing 1x1
                   ("resnet50", 256, side, width, width, 3, 1, blocks - 1)]  # later blocks' 3x3
        c_in = out
    return shapes


def vgg16_shapes() -> list[Shape]:
    shapes: list[Shape] = []
    side, c_in = 224, 3
    for width, convs in ((64, 2), (128, 2), (256, 3), (512, 3), (512, 3)):
        shapes.append(("vgg16", 128, side, c_in, width, 3, 1, 1))
        if convs > 1:
            shapes.append(("vgg16", 128, side, width, width, 3, 1, convs - 1))
        side //= 2
        c_in = width
    return shapes


def points_of(shape: Shape, dtype_name: str, warmup: int, iterations: int, device: torch.device) -> list[dict[str, Any]]:
    model, n, side, c_in, c_out, k, stride, count = shape
    dtype = DTYPES[dtype_name]
    padding = k // 2
    memory = torch.channels_last
    x = torch.randn(n, c_in, side, side, device=device, dtype=dtype).to(memory_format=memory)
    w = torch.randn(c_out, c_in, k, k, device=device, dtype=dtype).to(memory_format=memory)
    y = F.conv2d(x, w, stride=stride, padding=padding)
    grad = torch.randn_like(y).to(memory_format=memory)
    side_out = y.shape[-1]
    flops = 2.0 * n * side_out * side_out * c_out * c_in * k * k

    def backward(mask: list[bool]) -> Callable[[], Any]:
        return lambda: torch.ops.aten.convolution_backward(grad, x, w, None, [stride, stride], [padding, padding],
                                                           [1, 1], False, [0, 0], 1, mask + [False])

    passes: list[tuple[str, Callable[[], Any]]] = [
        ("forward", lambda: F.conv2d(x, w, stride=stride, padding=padding)),
        ("input gradient", backward([True, False])),
        ("weight gradient", backward([False, True]))]
    points = []
    for name, call in passes:
        if name == "input gradient" and c_in == 3:
            continue  # the stem's input gradient is never computed in training
        ms = timed_ms(call, warmup, iterations)
        points.append({"model": model, "batch": n, "side": side, "c_in": c_in, "c_out": c_out, "kernel": k,
                       "stride": stride, "count": count, "dtype": dtype_name, "pass": name, "time_ms": ms,
                       "flops": flops, "tflops": flops / ms / 1e9, "kernels": kernel_names(call)})
    return points


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-o", "--output", required=True)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--dtype", action="append", choices=sorted(DTYPES),
                        help="measure this dtype (repeatable; default: all four, fp32 last: its autotuning is slow)")
    args = parser.parse_args(argv)
    dtypes = args.dtype or ["tf32", "fp16", "bf16", "fp32"]
    device = torch.device("cuda")
    torch.backends.cudnn.benchmark = True
    points: list[dict[str, Any]] = []
    report = {"created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "device": torch.cuda.get_device_name(0), "torch": torch.__version__, "cuda": torch.version.cuda,
              "cudnn": torch.backends.cudnn.version(), "warmup": args.warmup, "iterations": args.iterations,
              "points": points}
    for dtype_name in dtypes:
        on = dtype_name == "tf32"
        torch.backends.cuda.matmul.allow_tf32 = on
        torch.backends.cudnn.allow_tf32 = on
        for shape in resnet50_shapes() + vgg16_shapes():
            points += points_of(shape, dtype_name, args.warmup, args.iterations, device)
            with open(args.output, "w") as out:  # after each shape: what was measured, should the run be stopped
                json.dump(report, out, indent=1)
        print(dtype_name, "done", file=sys.stderr, flush=True)
    for p in points:
        print(f"{p['dtype']:5} {p['model']:8} {p['side']:4} {p['c_in']:5}->{p['c_out']:<5} k{p['kernel']} s{p['stride']} "
              f"{p['pass']:16} {p['time_ms']:8.3f} ms {p['tflops']:7.1f} TFLOP/s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
