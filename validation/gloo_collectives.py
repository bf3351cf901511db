"""How long gloo's all-reduce takes on emulated nodes, alone and with 2 or 5 launched back
to back on one process group, over sizes: what the transport adds beyond the link's rate and
one-way delay, which linkprobe's TCP stream and ping-pong do not show. The validation
harness's collective table (its default) measures its back-to-back figures through `measure` below.

  sudo python3 validation/gloo_collectives.py --rate-gbps 1 --delay-us 2000 [--layout 2x1] [--build build]

Builds the harness's emulated cluster (netns.py: namespaces, linkemu) of `--layout` nodes x
ranks per node, probes the link as the harness does, then runs the ranks (rank r on node
r // ranks per node, as the harness places them). Prints the probe and, per size in bytes,
the median milliseconds of 8 lone all-reduces (`alone`) and of 4 rounds of 2 and 5 launched
at once (`back_to_back_2`, `back_to_back_5`), as JSON.

With --beside-compute, the same launches are timed again while every rank computes (small
matrix products on its one thread, `compute_chunk_ms` each, until its launches complete):
`beside_alone`, `beside_back_to_back_2`, `beside_back_to_back_5`. A collective launched on
its own while the cores compute, as DDP launches a bucket in backward, and the same
collectives queued five at once, as a calibration or the harness's compute-beside phase
launches them, are slowed differently (docs/VALIDATION.md).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from typing import Any, NoReturn

import netns  # the emulated cluster, and the Python with Debian's torch

HERE = os.path.dirname(os.path.abspath(__file__))

SIZES = [4096, 65536, 262144, 1 << 20, 4 << 20]


def rank_main(rank: int, world: int, master: str, out: str, sizes: Sequence[int], counts: Sequence[int],
              beside_compute: bool = False) -> NoReturn:
    import torch
    import torch.distributed as dist

    os.environ["GLOO_SOCKET_IFNAME"] = "eth0"
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://{master}", rank=rank, world_size=world)
    left, right = torch.randn(8, 128), torch.randn(128, 128)

    def compute_chunk() -> None:
        torch.mm(left, right)

    def timed_ms(tensors: list[Any], rounds: int, beside: bool) -> float:
        """Median over `rounds` of launching an all-reduce of each tensor at once and
        waiting for all, computing chunk after chunk meanwhile where `beside`."""
        times = []
        for _ in range(rounds):
            dist.barrier()
            start = time.perf_counter()
            works = [dist.all_reduce(t, async_op=True) for t in tensors]
            while beside and not all(w.is_completed() for w in works):
                compute_chunk()
            for work in works:
                work.wait()
            times.append(time.perf_counter() - start)
        return statistics.median(times) * 1e3

    result: dict[str, Any] = {}
    if beside_compute:
        start = time.perf_counter()
        for _ in range(1000):
            compute_chunk()
        result["compute_chunk_ms"] = (time.perf_counter() - start) / 1000 * 1e3
    for size in sizes:
        tensor = torch.ones(size // 4)
        for _ in range(2):
            dist.all_reduce(tensor)
        row: dict[str, float] = {}
        for beside in (False, True) if beside_compute else (False,):
            prefix = "beside_" if beside else ""
            if 1 in counts:
                row[prefix + "alone"] = timed_ms([tensor], 8, beside)
            for k in (k for k in counts if k > 1):
                row[f"{prefix}back_to_back_{k}"] = timed_ms([torch.ones(size // 4) for _ in range(k)], 4, beside)
        result[str(size)] = row
    if rank == 0:
        with open(out, "w") as f:
            json.dump(result, f)
    dist.barrier()
    sys.stdout.flush()
    os._exit(0)  # gloo's teardown can spin at interpreter exit


def measure(cluster: netns.Cluster, procs: netns.Processes, per_node: int, sizes: Sequence[int] = SIZES,
            counts: Sequence[int] = (1, 2, 5), port: int = 29777, beside_compute: bool = False) -> dict[str, Any]:
    """Runs the ranks on `cluster` (rank r on node r // per_node) and returns, per size in
    bytes, the median milliseconds of a lone all-reduce (`alone`, count 1) and of k launched
    at once (`back_to_back_k`); with `beside_compute` also each while every rank computes
    (`beside_...`)."""
    work = tempfile.mkdtemp(prefix="dtperf-gloo.")
    try:
        out = os.path.join(work, "result.json")
        world = cluster.nodes * per_node
        ranks = [procs.start(["ip", "netns", "exec", cluster.names[r // per_node], netns.PYTHON,
                              os.path.abspath(__file__), "--layout", f"{cluster.nodes}x{per_node}", "--rank", str(r),
                              "--master", f"{cluster.address(0)}:{port}", "--out", out,
                              "--sizes", ",".join(str(s) for s in sizes), "--counts", ",".join(str(k) for k in counts)]
                             + (["--beside-compute"] if beside_compute else []))
                 for r in range(world)]
        for p in ranks:
            p.wait(600)
        with open(out) as f:
            return json.load(f)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rate-gbps", type=float, default=1.0)
    parser.add_argument("--delay-us", type=int, default=2000)
    parser.add_argument("--layout", default="2x1", help="nodes x ranks per node")
    parser.add_argument("--build", default=os.path.join(os.path.dirname(HERE), "build"))
    parser.add_argument("--rank", type=int, help=argparse.SUPPRESS)  # one rank, inside its namespace
    parser.add_argument("--master", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--sizes", default=",".join(str(s) for s in SIZES), help=argparse.SUPPRESS)
    parser.add_argument("--counts", default="1,2,5", help=argparse.SUPPRESS)
    parser.add_argument("--beside-compute", action="store_true",
                        help="time every launch again while every rank computes (beside_... in the output)")
    args = parser.parse_args()
    nodes, per_node = (int(x) for x in args.layout.split("x"))
    if args.rank is not None:
        rank_main(args.rank, nodes * per_node, args.master, args.out,
                  [int(s) for s in args.sizes.split(",")], [int(k) for k in args.counts.split(",")],
                  args.beside_compute)

    with netns.emulated_cluster(nodes, f"dtg{os.getpid() % 100000}", os.path.join(args.build, "calibrate", "linkemu"),
                                args.rate_gbps, args.delay_us) as (cluster, procs, work):
        link = netns.probe(cluster, os.path.join(args.build, "calibrate", "linkprobe"), procs, work)
        print(json.dumps({"layout": args.layout, "link": link, "all_reduce_ms": measure(cluster, procs, per_node,
                                                                                    beside_compute=args.beside_compute)},
                         indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
