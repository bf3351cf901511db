"""GPT-2's GELU kernel by kernel: the profiled step's count and time beside the model's price.

    python3 validation/gelu_kernels.py [--kernels FILE] [--profile FILE]

Hugging Face's GPT-2 runs its activation, "gelu_new", as PyTorch operators:
    y = 0.5 * x * (1.0 + tanh(sqrt(2 / pi) * (x + 0.044715 * pow(x, 3.0))))
The compute model counts them (src/core/zoo/llm.cpp, eager_gelu): 8 kernels forward and 11
backward a layer; 72 + 112 bytes per hidden element in fp32, 76 + 118 in 16 bits (autocast
runs pow in fp32, and the chain after it is fp32 by type promotion). This script reads a
profiled training step (measure_op_breakdown.py; default
validation/data/single-gpu/h200-kernels.json, GPT-2 small at batch 8 on an H200) and prints,
per dtype, the kernels of the kinds the chain runs: their count per layer and their time.

The scalar multiplications, pow, tanh, its backward and the scalar add are the chain's alone
(GPT-2 runs tanh nowhere else). The tensor multiplications are the chain's 4 a layer, and
in tf32 one more a layer that is not. The chain's three tensor adds a layer and its casts
share their kernels' names with the residual adds and autocast's other casts, so they are
not in the sum. The file lists a step's 40 longest kernels only.

The model's price is the chain's bytes at the profile's copy bandwidth (default
profiles/calibrated/h200-1gpu.json): layers x batch x 1,024 tokens x 3,072 x bytes per
element.

Only the standard library: it runs wherever the tests run.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LAYERS = 12
BATCH = 8
HIDDEN_PER_SEQUENCE = 1024 * 3072
# Bytes per hidden element, forward + backward (zoo/llm.cpp, eager_gelu).
CHAIN_BYTES = {"tf32": 72 + 112, "fp32": 72 + 112, "bf16": 76 + 118, "fp16": 76 + 118}

# Kernel kinds of the chain, by a fragment of the kernel's name; order matters (the tanh
# backward's name contains the forward's).
KINDS = [
    ("tanh backward", "tanh_backward_kernel_cuda"),
    ("tanh", "tanh_kernel_cuda"),
    ("pow", "pow_tensor_scalar_kernel"),
    ("scalar add", "CUDAFunctorOnSelf_add"),
    ("scalar multiply", "AUnaryFunctor<"),
    ("tensor multiply", "BinaryFunctor<"),
]


def kind_of(name: str) -> str | None:
    """The chain's kind of a kernel, or None. Multiplications only (MulFunctor)."""
    for kind, fragment in KINDS:
        if fragment in name:
            if kind.endswith("multiply") and "MulFunctor" not in name:
                return None
            return kind
    return None


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", default=str(ROOT / "validation/data/single-gpu/h200-kernels.json"))
    parser.add_argument("--profile", default=str(ROOT / "profiles/calibrated/h200-1gpu.json"))
    args = parser.parse_args(argv)
    kernels = json.loads(Path(args.kernels).read_text())
    profile = json.loads(Path(args.profile).read_text())
    copy_bytes_per_s = profile["gpu"]["memory_bandwidth_GB_per_s"] * 1e9
    for result in kernels["results"]:
        if result["model"] != "gpt2-small":
            continue
        dtype = result["dtype"]
        counts: dict[str, float] = {}
        ms: dict[str, float] = {}
        for kernel in result["kernels"]:
            kind = kind_of(kernel["name"])
            if kind is None:
                continue
            counts[kind] = counts.get(kind, 0.0) + kernel["count"]
            ms[kind] = ms.get(kind, 0.0) + kernel["ms"]
        print(f"gpt2-small {dtype}, batch {result['batch_per_gpu']}: step {result['step_ms']:.1f} ms")
        for kind, _ in KINDS:
            if kind in counts:
                print(f"  {kind:16s} {counts[kind]:4.0f} kernels, {counts[kind] / LAYERS:4.1f} a layer, "
                      f"{ms[kind]:6.2f} ms")
        print(f"  {'sum':16s} {sum(counts.values()):4.0f} kernels, {sum(counts.values()) / LAYERS:4.1f} a layer, "
              f"{sum(ms.values()):6.2f} ms (without its 3 adds a layer and its casts)")
        chain_bytes = LAYERS * BATCH * HIDDEN_PER_SEQUENCE * CHAIN_BYTES[dtype]
        print(f"  the model's price: 19 kernels a layer, {chain_bytes / 1e9:.1f} GB at "
              f"{copy_bytes_per_s / 1e12:.2f} TB/s = {chain_bytes / copy_bytes_per_s * 1e3:.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
