"""How much compute gloo's all-reduces cost on emulated nodes, by size, launched one at a
time and five at once: whether a host transport's CPU cost is per byte alone or also per
collective, the two forms dtperf's host contention could take (include/dtperf/contention.hpp).

  sudo python3 validation/compute_loss.py --rate-gbps 1 --delay-us 100 [--build build]

Builds a cluster of two emulated nodes of one rank (netns.py, linkemu). Each rank computes
small matrix products on its one thread (`chunk_ms` each, timed alone just before every
block) and launches, per size and count k, k all-reduces at once, relaunching as soon as all
have completed, for about 1.5 s (the same number of rounds on both ranks). Compute lost per
round is the block's wall time less its products at their time alone. Prints per rank, per
size and k: the time of k alone, the rounds, the compute lost per round and per byte sent.
A cost per collective shows as a loss per round that does not fall to zero with the size,
and that grows k-fold with k launched at once.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from typing import Any, NoReturn

import netns  # the emulated cluster, and the Python with Debian's torch

HERE = os.path.dirname(os.path.abspath(__file__))

SIZES = [65536, 262144, 1 << 20, 4 << 20]
COUNTS = (1, 5)
BLOCK_S = 1.5  # compute beside the launches, per size and count
MAX_ROUNDS = 300


def rank_main(rank: int, master: str, out: str, sizes: Sequence[int]) -> NoReturn:
    import torch
    import torch.distributed as dist

    os.environ["GLOO_SOCKET_IFNAME"] = "eth0"
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://{master}", rank=rank, world_size=2)
    left, right = torch.randn(8, 1024), torch.randn(1024, 1024)

    def chunk() -> None:
        torch.mm(left, right)

    def chunk_s() -> float:
        dist.barrier()
        start = time.perf_counter()
        for _ in range(100):
            chunk()
        return (time.perf_counter() - start) / 100

    for _ in range(50):
        chunk()
    result: dict[str, Any] = {}
    for size in sizes:
        for k in COUNTS:
            tensors = [torch.ones(size // 4) for _ in range(k)]
            for t in tensors:  # warm-up
                dist.all_reduce(t)
            dist.barrier()
            start = time.perf_counter()
            for _ in range(6):
                for w in [dist.all_reduce(t, async_op=True) for t in tensors]:
                    w.wait()
            alone_s = (time.perf_counter() - start) / 6
            # Both ranks must launch as many: the larger of their counts.
            rounds = torch.tensor([min(MAX_ROUNDS, max(4, int(BLOCK_S / max(alone_s, 1e-4))))])
            dist.all_reduce(rounds, op=dist.ReduceOp.MAX)
            one_chunk_s = chunk_s()
            dist.barrier()
            start = time.perf_counter()
            chunks, launched = 0, 1
            works = [dist.all_reduce(t, async_op=True) for t in tensors]
            while True:
                chunk()
                chunks += 1
                if all(w.is_completed() for w in works):
                    if launched == int(rounds.item()):
                        break
                    works = [dist.all_reduce(t, async_op=True) for t in tensors]
                    launched += 1
            lost_s = time.perf_counter() - start - chunks * one_chunk_s
            result[f"{size}x{k}"] = {"chunk_ms": one_chunk_s * 1e3, "alone_ms": alone_s * 1e3, "rounds": launched,
                                     "lost_ms_per_round": lost_s / launched * 1e3,
                                     "lost_ns_per_byte": lost_s / (launched * k * size) * 1e9}
    with open(f"{out}.{rank}", "w") as f:
        json.dump(result, f)
    dist.barrier()
    sys.stdout.flush()
    os._exit(0)  # gloo's teardown can spin at interpreter exit


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rate-gbps", type=float, default=1.0)
    parser.add_argument("--delay-us", type=int, default=100)
    parser.add_argument("--build", default=os.path.join(os.path.dirname(HERE), "build"))
    parser.add_argument("--rank", type=int, help=argparse.SUPPRESS)  # one rank, inside its namespace
    parser.add_argument("--master", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--sizes", default=",".join(str(s) for s in SIZES), help="bytes, comma-separated")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    if args.rank is not None:
        rank_main(args.rank, args.master, args.out, sizes)

    with netns.emulated_cluster(2, f"dtl{os.getpid() % 100000}", os.path.join(args.build, "calibrate", "linkemu"),
                                args.rate_gbps, args.delay_us) as (cluster, procs, work):
        out = os.path.join(work, "result")
        ranks = [procs.start(["ip", "netns", "exec", cluster.names[r], netns.PYTHON, os.path.abspath(__file__),
                              "--rank", str(r), "--master", f"{cluster.address(0)}:29781", "--out", out,
                              "--sizes", args.sizes]) for r in range(2)]
        for p in ranks:
            p.wait(900)
        report = {"rate_gbps": args.rate_gbps, "delay_us": args.delay_us, "ranks": []}
        for r in range(2):
            with open(f"{out}.{r}") as f:
                report["ranks"].append(json.load(f))
        print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
