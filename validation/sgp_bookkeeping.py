"""What SGP's push-sum bookkeeping costs per iteration on one device, as its reference
implementation does it, against the same ops over one flat buffer.

SGP's reference implementation (GossipDataParallel in facebookresearch/stochastic_gradient_push,
overlap mode) walks the parameter tensors one at a time, six times per iteration: before
forward it adds the received residual (add_), mixes (mul_ by the push-sum factor), copies
into the send buffer (copy_) and from there on the gossip stream (copy_), and de-biases
(div_ by the push-sum weight); after backward it turns the parameters back into push-sum
numerators (mul_). Thirteen passes over the model's bytes in all, in 6 x tensors kernel
launches. dtperf's SGP charges these passes once each over the whole model
(include/dtperf/gossip.hpp); this script measures the per-tensor form, and the main
stream's five ops (eleven passes) over one flat buffer, on transformer-base's 253 fp32
tensors (the fairseq WMT model of dtperf's zoo, 60.9 M parameters):

  python3 validation/sgp_bookkeeping.py cuda     # or cpu

It prints JSON: per form, the median wall time of a whole iteration's bookkeeping (the
device synchronised at both ends) and how long the host took to issue it, plus the time of
one in-place op on a one-element tensor (the host's cost per launch) and the device's copy
rate (bytes read + written per second).
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections.abc import Callable

import torch

from sgp_timeline import TransformerBase


def timed_ms(fn: Callable[[], object], sync: Callable[[], object], reps: int = 30, warmup: int = 5) -> dict[str, float]:
    for _ in range(warmup):
        fn()
    sync()
    wall: list[float] = []
    issue: list[float] = []
    for _ in range(reps):
        sync()
        start = time.perf_counter()
        fn()
        issued = time.perf_counter()
        sync()
        wall.append((time.perf_counter() - start) * 1e3)
        issue.append((issued - start) * 1e3)
    return {"wall_ms": statistics.median(wall), "issue_ms": statistics.median(issue)}


def main() -> None:
    device = torch.device(sys.argv[1] if len(sys.argv) > 1 else "cpu")
    cuda = device.type == "cuda"
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    params = [torch.randn(p.shape, device=device) for p in TransformerBase().parameters()]
    received = [p.clone() for p in params]
    send = [p.clone() for p in params]
    gossip = [p.clone() for p in params]
    weight = torch.ones(1, device=device)
    factor = torch.full((1,), 0.5, device=device)
    gossip_stream = torch.cuda.Stream() if cuda else None

    def per_tensor() -> None:
        for p, r in zip(params, received):
            p.add_(r)
        for p, b in zip(params, send):
            p.mul_(factor)
            b.copy_(p)
        if cuda:
            gossip_stream.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(gossip_stream):
                for b, g in zip(send, gossip):
                    g.copy_(b, non_blocking=True)
        else:
            for b, g in zip(send, gossip):
                g.copy_(b)
        for p in params:
            p.div_(weight)
        for p in params:
            p.mul_(weight)

    n = sum(p.numel() for p in params)
    flat, flat_received, flat_send = (torch.randn(n, device=device) for _ in range(3))

    def fused() -> None:  # the main stream's five ops (eleven passes), each over one flat buffer
        flat.add_(flat_received)
        flat.mul_(factor)
        flat_send.copy_(flat)
        flat.div_(weight)
        flat.mul_(weight)

    one = torch.zeros(1, device=device)

    def launches() -> None:
        for _ in range(1000):
            one.mul_(weight)

    big = torch.empty(256 << 20, device=device)
    big_copy = torch.empty_like(big)
    copy = timed_ms(lambda: big_copy.copy_(big), sync, reps=10)
    report = {
        "device": torch.cuda.get_device_name() if cuda else "cpu",
        "torch": torch.__version__,
        "tensors": len(params),
        "parameters": n,
        "per_tensor_ops": 6 * len(params),
        "per_tensor": timed_ms(per_tensor, sync),
        "fused": timed_ms(fused, sync),
        "one_launch_us": timed_ms(launches, sync, reps=15)["wall_ms"],  # ms per 1000 = us per launch
        "copy_GB_per_s": 2 * big.numel() * 4 / (copy["wall_ms"] * 1e-3) / 1e9,
    }
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
