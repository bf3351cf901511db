"""How a node link shared by crossing ranks is served decides a decentralized run's regime.

On 2 nodes x 2 ranks, one-peer-exp pairs the ranks of each node at even steps and each rank
with one on the other node at odd steps, so at odd steps both ranks of a node cross its one
link. Decent-DP's per-bucket semantics (include/dtperf/gossip.hpp): at iteration t, bucket
b's hook waits for the bucket's exchange of t - 1, then launches its exchange of step t; a
rank's exchanges on one link level run one after another. Three ways to serve the node link,
simulated event by event (no contention, every rank alike):

  in-phase      both crossing pairs at once, each at half the link: dtperf's stream model
  bucket-order  one pair at a time at the full rate, bucket by bucket (bucket b of both
                pairs before bucket b + 1 of either)
  first-come    one pair at a time at the full rate, in the order the exchanges are ready,
                whatever their bucket

It prints the mean iteration over the last 20 of 60 iterations for each, and the link's busy
time per iteration (its bytes over its rate), which no run can beat where the link bounds it.

  python3 validation/node_link_regimes.py

The defaults are the validation harness's 2x2 cell at 100 Mbit/s and 0.1 ms (harness.py, the
second full grid of docs/VALIDATION.md): the collector's MLP in four buckets of 1.18, 1.05,
1.05 and 0.53 MB (1 MiB cap, gradient-ready order), each 95.0, 84.5, 84.5 and 42.6 ms alone on
the 99.4 Mbit/s link the harness probed; forward 51.8 ms and the buckets' backward 23.6, 20.8,
20.3 and 4.4 ms (dtperf's compute for the cell without the transport's CPU share, split as the
collector's per-layer times); mixing and step 0.57 ms per bucket; an exchange inside a node
0.3 ms. Measured there: 307.5-311.9 ms per iteration (one-peer-exp and ring at both delays,
two regimes seen across grids: 308-314 or 327-335 ms); the link is busy 306.6 ms per
iteration.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

DISCIPLINES = ("in-phase", "bucket-order", "first-come")


def mean_iteration_ms(discipline: str, forward_ms: float, backward_ms: Sequence[float], link_ms: Sequence[float],
                      mix_ms: float, intra_ms: float, iterations: int = 60, measured: int = 20) -> float:
    """The mean iteration over the last `measured` of `iterations`, ranks 0, 1 on node A and
    2, 3 on node B; `link_ms[b]`: bucket b's exchange alone on the node link."""
    buckets = len(backward_ms)
    clock = [0.0] * 4
    done = [[0.0] * buckets for _ in range(4)]  # per rank and bucket: the exchange of t - 1
    stream: dict[tuple[int, int], float] = {}   # per rank and level: free from
    link_free = 0.0                              # both nodes' links (both pairs cross both)
    ends = []
    for t in range(iterations):
        crossing = t % 2 == 1
        pairs = [(0, 2), (1, 3)] if crossing else [(0, 1), (2, 3)]
        launch = [[0.0] * buckets for _ in range(4)]
        for r in range(4):
            c = clock[r] + forward_ms
            for b in range(buckets):
                c = max(c + backward_ms[b], done[r][b]) + mix_ms
                launch[r][b] = c
            clock[r] = c
        ready = [(max(launch[x][b], launch[y][b]), b, x, y) for (x, y) in pairs for b in range(buckets)]
        level = 1 if crossing else 0
        if not crossing:
            order, shared, cost = sorted(ready), False, [intra_ms] * buckets
        elif discipline == "in-phase":
            order, shared, cost = sorted(ready, key=lambda e: (e[1], e[2])), False, [2 * x for x in link_ms]
        elif discipline == "bucket-order":
            order, shared, cost = sorted(ready, key=lambda e: (e[1], e[0], e[2])), True, list(link_ms)
        else:
            order, shared, cost = sorted(ready), True, list(link_ms)
        for at, b, x, y in order:
            start = max(at, stream.get((x, level), 0.0), stream.get((y, level), 0.0))
            if shared:
                start = max(start, link_free)
            end = start + cost[b]
            stream[(x, level)] = stream[(y, level)] = end
            if shared:
                link_free = end
            done[x][b] = done[y][b] = end
        ends.append(max(clock))
    return (ends[-1] - ends[-1 - measured]) / measured


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--forward-ms", type=float, default=51.8)
    parser.add_argument("--backward-ms", type=float, nargs="+", default=[23.6, 20.8, 20.3, 4.4])
    parser.add_argument("--link-ms", type=float, nargs="+", default=[95.0, 84.5, 84.5, 42.6],
                        help="each bucket's exchange alone on the node link")
    parser.add_argument("--mix-ms", type=float, default=0.57)
    parser.add_argument("--intra-ms", type=float, default=0.3)
    args = parser.parse_args(argv)
    if len(args.backward_ms) != len(args.link_ms):
        print("node_link_regimes: --backward-ms and --link-ms need one value per bucket each", file=sys.stderr)
        return 2
    out = {d: round(mean_iteration_ms(d, args.forward_ms, args.backward_ms, args.link_ms, args.mix_ms,
                                      args.intra_ms), 2)
           for d in DISCIPLINES}
    out["link_busy_ms"] = round(sum(args.link_ms), 2)  # two exchanges of each bucket every two iterations
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
