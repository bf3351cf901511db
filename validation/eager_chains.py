"""Operator chains that Hugging Face models write out in PyTorch, traced kernel by kernel.

dtperf's zoo prices GPT-2's GELU (gelu_new) and Llama's RMS norm, SwiGLU and rotary
embedding as the PyTorch operators they are written in, each a kernel and a pass over the
tensor (src/core/zoo/llm.cpp, src/core/zoo/builder.cpp). This script runs each chain
forward and backward under a TorchDispatchMode and counts what reaches ATen below
autograd: every operator that launches a kernel, and the elements it reads and writes.

Rules of the count, those of the zoo's comments:
- Views (view, transpose, slice, expand, ...) and metadata queries (is_same_size) launch
  nothing and are not counted.
- An operand is counted by its distinct elements (a broadcast row read once), in units of
  the chain's tensor; operands under a quarter of it (a row's statistic, the norm's weight,
  the rotary's cos and sin, one row per position shared by every head) are left out of the
  accesses, though their kernels count.
- slice_backward is one ATen operator that runs two kernels on a GPU: a zero fill of the
  whole gradient and the slice copied in (ATen's slice_backward: zeros, then copy_).

The expected numbers are the zoo's; the script exits 1 when a trace differs from them.
It needs only PyTorch (any device: the chains are traced on small CPU tensors, where the
operators and autograd's derivative formulas are those a GPU runs).

usage: python3 validation/eager_chains.py
"""

from __future__ import annotations

import math
import sys
from typing import Any, Callable

import torch
import torch.nn.functional as F
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

TOKENS, FEATURES, HEADS = 16, 64, 8
SMALL = 0.25  # operands below this fraction of the chain's tensor are left out

NO_KERNEL = {
    "view", "_unsafe_view", "_reshape_alias", "reshape", "transpose", "t", "expand", "slice",
    "select", "unsqueeze", "squeeze", "permute", "as_strided", "detach", "alias", "split",
    "split_with_sizes", "unbind", "is_same_size",
}
TWO_KERNELS = {"slice_backward"}

# (kernels, accesses) forward and backward, as the zoo counts them.
EXPECTED = {
    "gelu_new (GPT-2)": ((8, 18.0), (11, 28.0)),
    "RMS norm (Llama)": ((6, 7.0), (14, 23.0)),
    "SwiGLU (Llama)": ((2, 5.0), (3, 9.0)),
    "rotary embedding (Llama)": ((5, 10.0), (9, 15.0)),
}


def distinct_elements(t: torch.Tensor) -> int:
    """Elements a kernel really touches: broadcast (stride 0) dimensions count once."""
    return math.prod(size for size, stride in zip(t.shape, t.stride()) if stride != 0 or size == 1)


class Trace(TorchDispatchMode):
    def __init__(self, unit: int):
        super().__init__()
        self.unit = unit
        self.kernels = 0
        self.accesses = 0.0
        self.ops: list[str] = []

    def _size(self, t: torch.Tensor) -> float:
        share = distinct_elements(t) / self.unit
        return share if share >= SMALL else 0.0

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        out = func(*args, **(kwargs or {}))
        name = func.__name__.split(".")[0]
        if name in NO_KERNEL:
            return out
        reads = sum(self._size(a) for a in tree_flatten((args, kwargs))[0] if isinstance(a, torch.Tensor))
        writes = sum(self._size(a) for a in tree_flatten(out)[0] if isinstance(a, torch.Tensor))
        if name in TWO_KERNELS:  # the whole gradient zero-filled, then the slice copied in
            self.kernels += 2
            accesses = writes + 2.0 * reads
        else:
            self.kernels += 1
            accesses = reads + writes
        self.accesses += accesses
        self.ops.append(f"{name} {accesses:g}")
        return out


def trace(fn: Callable[..., torch.Tensor], inputs: list[torch.Tensor], unit: int) -> tuple[Trace, Trace]:
    for t in inputs:
        t.requires_grad_(True)
    with Trace(unit) as forward:
        y = fn(*inputs)
    gradient = torch.ones_like(y)  # the incoming gradient, made outside the trace
    with Trace(unit) as backward:
        y.backward(gradient)
    return forward, backward


def gelu_new(x: torch.Tensor) -> torch.Tensor:
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def rms_norm(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    dtype = x.dtype
    h = x.to(torch.float32)
    variance = h.pow(2).mean(-1, keepdim=True)
    h = h * torch.rsqrt(variance + 1e-6)
    return weight * h.to(dtype)


def swiglu(gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    return F.silu(gate) * up


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def main() -> int:
    torch.manual_seed(0)
    unit = TOKENS * FEATURES
    head_dim = FEATURES // HEADS
    inverse_frequency = 1.0 / (10000.0 ** (torch.arange(0, head_dim, 2).float() / head_dim))
    angles = torch.outer(torch.arange(TOKENS).float(), inverse_frequency)
    angles = torch.cat((angles, angles), dim=-1)
    cos, sin = angles.cos()[None, None], angles.sin()[None, None]  # one row per position

    def rotary(q: torch.Tensor) -> torch.Tensor:
        return q * cos + rotate_half(q) * sin

    chains: dict[str, tuple[Callable[..., torch.Tensor], list[torch.Tensor]]] = {
        "gelu_new (GPT-2)": (gelu_new, [torch.randn(TOKENS, FEATURES)]),
        "RMS norm (Llama)": (rms_norm, [torch.randn(TOKENS, FEATURES), torch.ones(FEATURES)]),
        "SwiGLU (Llama)": (swiglu, [torch.randn(TOKENS, FEATURES), torch.randn(TOKENS, FEATURES)]),
        "rotary embedding (Llama)": (rotary, [torch.randn(1, HEADS, TOKENS, head_dim)]),
    }
    print(f"# PyTorch {torch.__version__}: kernels and accesses (elements of the chain's tensor, read + written)")
    print(f"#  {'chain':<26} {'forward':>16} {'backward':>16}   zoo: forward, backward")
    failed = 0
    for label, (fn, inputs) in chains.items():
        forward, backward = trace(fn, inputs, unit)
        got = ((forward.kernels, round(forward.accesses, 6)), (backward.kernels, round(backward.accesses, 6)))
        want = EXPECTED[label]
        mark = "" if got == want else "   DIFFERS"
        failed += got != want
        print(f"   {label:<26} {got[0][0]:>3} k {got[0][1]:>6g} acc {got[1][0]:>3} k {got[1][1]:>6g} acc"
              f"   {want[0][0]} k {want[0][1]:g}, {want[1][0]} k {want[1][1]:g}{mark}")
        if got != want:
            print(f"     forward:  {', '.join(forward.ops)}\n     backward: {', '.join(backward.ops)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
