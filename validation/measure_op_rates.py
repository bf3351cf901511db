"""Rates of the two operations the single-GPU kernel breakdown (measure_op_breakdown.py)
found slow, each timed alone on one GPU, to give the compute model a measured rate for them:

- **GEMMs with a dimension that is not a multiple of 8.** A linear layer's three products
  (forward, input gradient, weight gradient) for 8,192 tokens of width 768 onto an output
  of 50,257 (GPT-2's vocabulary), 50,260 (a multiple of 4, not of 8) and 50,304 (of 64),
  and a large product 8192 x 4097 x 4096 beside 8192 x 4096 x 4096.
- **Fused attention** (torch's scaled_dot_product_attention, the kernel PyTorch picks) on
  GPT-2 small's and ViT-B/16's shapes, forward alone and forward + backward, causal and not.

    python3 validation/measure_op_rates.py -o op-rates.json

Dtypes: fp32 (TF32 off), tf32 (on), fp16, bf16; tensors made in that dtype (tf32: fp32
tensors). Each point: `--warmup` untimed calls, then `--iterations` calls between two CUDA
events; time_ms is their mean; `kernels` names the kernels one call ran (torch.profiler).
The weight gradient is timed on contiguous operands (rows of 8,192 tokens, aligned);
training's reads the output gradient transposed, whose rows have the vocabulary's length. FLOPs: 2 m n k per product; attention 4 b h s^2 d forward
(QK^T and PV, the full square even where causal) and 3.5 times that forward + backward
(the backward's 5 products: it recomputes QK^T and makes dV, dP, dQ, dK), so tflops
compare with the dtype's dense peak.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from typing import Any, Callable

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile

from measure_single_gpu import timed_ms

DTYPES = {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}


def kernel_names(call: Callable[[], Any]) -> list[str]:
    """The GPU kernels one call runs, by name (torch.profiler)."""
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        call()
        torch.cuda.synchronize()
    return sorted({event.name for event in prof.events()
                   if event.device_type == torch.autograd.DeviceType.CUDA})


def set_tf32(dtype_name: str) -> None:
    on = dtype_name == "tf32"
    torch.backends.cuda.matmul.allow_tf32 = on
    torch.backends.cudnn.allow_tf32 = on


def gemm_points(dtype_name: str, warmup: int, iterations: int, device: torch.device) -> list[dict[str, Any]]:
    dtype = DTYPES[dtype_name]
    set_tf32(dtype_name)
    tokens, width = 8192, 768
    # (what, m, n, k): C[m, n] = A[m, k] B[k, n]
    shapes: list[tuple[str, int, int, int]] = []
    for vocab in (50257, 50260, 50304):
        shapes += [(f"output layer forward, vocab {vocab}", tokens, vocab, width),
                   (f"output layer input gradient, vocab {vocab}", tokens, width, vocab),
                   (f"output layer weight gradient, vocab {vocab}", vocab, width, tokens)]
    shapes += [("large, n 4096", 8192, 4096, 4096), ("large, n 4097", 8192, 4097, 4096)]
    points = []
    for what, m, n, k in shapes:
        a = torch.randn(m, k, device=device, dtype=dtype)
        b = torch.randn(k, n, device=device, dtype=dtype)
        ms = timed_ms(lambda: torch.mm(a, b), warmup, iterations)
        flops = 2.0 * m * n * k
        points.append({"op": "gemm", "what": what, "dtype": dtype_name, "m": m, "n": n, "k": k,
                       "time_ms": ms, "flops": flops, "tflops": flops / ms / 1e9,
                       "kernels": kernel_names(lambda: torch.mm(a, b))})
        del a, b
    return points


def attention_points(dtype_name: str, warmup: int, iterations: int, device: torch.device) -> list[dict[str, Any]]:
    dtype = DTYPES[dtype_name]
    set_tf32(dtype_name)
    # (model, batch, heads, sequence, head width, causal)
    shapes = [("gpt2-small", 8, 12, 1024, 64, True), ("vit-b16", 128, 12, 197, 64, False)]
    points = []
    for model, b, h, s, d, causal in shapes:
        q, k, v = (torch.randn(b, h, s, d, device=device, dtype=dtype, requires_grad=True) for _ in range(3))
        grad = torch.randn(b, h, s, d, device=device, dtype=dtype)
        forward_flops = 4.0 * b * h * s * s * d

        def forward() -> Any:
            # PyTorch 2.0 and later (Debian's 1.13, which type-checks this file, lacks it).
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal)  # type: ignore[attr-defined]

        def forward_backward() -> None:
            out = forward()
            torch.autograd.backward(out, grad)

        for what, call, flops in (("forward", forward, forward_flops),
                                  ("forward + backward", forward_backward, 3.5 * forward_flops)):
            ms = timed_ms(call, warmup, iterations)
            names = kernel_names(call)
            points.append({"op": "attention", "what": f"{model} {what}", "dtype": dtype_name, "batch": b,
                           "heads": h, "sequence": s, "head_width": d, "causal": causal,
                           "time_ms": ms, "flops": flops, "tflops": flops / ms / 1e9, "kernels": names})
        del q, k, v, grad
    return points


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-o", "--output", required=True)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=20)
    args = parser.parse_args(argv)
    device = torch.device("cuda")
    points = []
    for dtype_name in DTYPES:
        points += gemm_points(dtype_name, args.warmup, args.iterations, device)
        points += attention_points(dtype_name, args.warmup, args.iterations, device)
        print(dtype_name, "done", file=sys.stderr)
    report = {"created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "device": torch.cuda.get_device_name(0), "torch": torch.__version__,
              "cuda": torch.version.cuda, "warmup": args.warmup, "iterations": args.iterations,
              "points": points}
    with open(args.output, "w") as out:
        json.dump(report, out, indent=1)
    for p in points:
        print(f"{p['dtype']:5} {p['op']:9} {p['what']:48} {p['time_ms']:9.3f} ms {p['tflops']:8.1f} TFLOP/s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
