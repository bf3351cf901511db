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


def rank_main(rank: int, world: int, master: str, out: str, sizes: Sequence[int], counts: Sequence[int]) -> NoReturn:
    import torch
    import torch.distributed as dist

    os.environ["GLOO_SOCKET_IFNAME"] = "eth0"
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://{master}", rank=rank, world_size=world)
    result: dict[str, dict[str, float]] = {}
    for size in sizes:
        tensor = torch.ones(size // 4)
        for _ in range(2):
            dist.all_reduce(tensor)
        row: dict[str, float] = {}
        if 1 in counts:
            times = []
            for _ in range(8):
                dist.barrier()
                start = time.perf_counter()
                dist.all_reduce(tensor)
                times.append(time.perf_counter() - start)
            row["alone"] = statistics.median(times) * 1e3
        for k in (k for k in counts if k > 1):
            tensors = [torch.ones(size // 4) for _ in range(k)]
            times = []
            for _ in range(4):
                dist.barrier()
                start = time.perf_counter()
                for work in [dist.all_reduce(t, async_op=True) for t in tensors]:
                    work.wait()
                times.append(time.perf_counter() - start)
            row[f"back_to_back_{k}"] = statistics.median(times) * 1e3
        result[str(size)] = row
    if rank == 0:
        with open(out, "w") as f:
            json.dump(result, f)
    dist.barrier()
    sys.stdout.flush()
    os._exit(0)  # gloo's teardown can spin at interpreter exit


def measure(cluster: netns.Cluster, procs: netns.Processes, per_node: int, sizes: Sequence[int] = SIZES,
            counts: Sequence[int] = (1, 2, 5), port: int = 29777) -> dict[str, Any]:
    """Runs the ranks on `cluster` (rank r on node r // per_node) and returns, per size in
    bytes, the median milliseconds of a lone all-reduce (`alone`, count 1) and of k launched
    at once (`back_to_back_k`)."""
    work = tempfile.mkdtemp(prefix="dtperf-gloo.")
    try:
        out = os.path.join(work, "result.json")
        world = cluster.nodes * per_node
        ranks = [procs.start(["ip", "netns", "exec", cluster.names[r // per_node], netns.PYTHON,
                              os.path.abspath(__file__), "--layout", f"{cluster.nodes}x{per_node}", "--rank", str(r),
                              "--master", f"{cluster.address(0)}:{port}", "--out", out,
                              "--sizes", ",".join(str(s) for s in sizes), "--counts", ",".join(str(k) for k in counts)])
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
    args = parser.parse_args()
    nodes, per_node = (int(x) for x in args.layout.split("x"))
    if args.rank is not None:
        rank_main(args.rank, nodes * per_node, args.master, args.out,
                         [int(s) for s in args.sizes.split(",")], [int(k) for k in args.counts.split(",")])

    work = tempfile.mkdtemp(prefix="dtperf-gloo.")
    procs = netns.Processes()
    cluster = netns.Cluster(nodes, f"dtg{os.getpid() % 100000}")
    try:
        netns.start_link_emulator(procs, cluster, os.path.join(args.build, "calibrate", "linkemu"), args.rate_gbps,
                                  args.delay_us, work)
        link = netns.probe(cluster, os.path.join(args.build, "calibrate", "linkprobe"), procs, work)
        print(json.dumps({"layout": args.layout, "link": link, "all_reduce_ms": measure(cluster, procs, per_node)},
                         indent=1))
    finally:
        procs.stop_all()
        cluster.close()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
