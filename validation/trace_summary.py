"""Reads the traces that `harness.py --trace DIR` keeps and prints, per run and rank, each
timed iteration's duration with the step of the period it ran, the mean per whole period,
and for decentralized training how long the rank waited for each step's exchanges: enough
to tell a steady run from one that changes regime part-way, and which exchange a slow
iteration waited for. The node's TCP counters over the run follow (retransmissions and
timeouts: a lossy transport, not the model, would explain a stall).

  python3 validation/trace_summary.py DIR [NAME ...]

NAME is a run's prefix, e.g. 4x1-0.1-100-alternating-exp-ring (default: every run in DIR).
"""

import bisect
import glob
import json
import os
import re
import statistics
import sys


def runs(directory, names):
    found = {}
    for path in sorted(glob.glob(os.path.join(directory, "*-rank*.json"))):
        prefix, rank = re.match(r"(.*)-rank(\d+)\.json$", os.path.basename(path)).groups()
        if not names or prefix in names:
            with open(path) as f:
                found.setdefault(prefix, {})[int(rank)] = json.load(f)
    return found


def rank_summary(trace):
    """One rank's trace: its iterations (ms), how long it waited in each (ms, charged to the
    iteration in which the wait began) and the mean iteration of each whole period (ms)."""
    period = trace["steps_per_period"]
    iterations_ms = [t * 1e3 for t in trace["iteration_s"]]
    starts = trace["iteration_starts_s"]
    waited_ms = [0.0] * len(starts)
    for event in trace["events"]:
        if event["event"] == "wait":
            i = max(0, bisect.bisect_right(starts, event["t0_s"]) - 1)
            waited_ms[i] += (event["t1_s"] - event["t0_s"]) * 1e3
    periods = [statistics.mean(iterations_ms[i:i + period])
               for i in range(0, len(iterations_ms) - period + 1, period)]
    return iterations_ms, waited_ms, periods


def summarize(prefix, ranks, tcp):
    print(f"{prefix}")
    for rank in sorted(ranks):
        trace = ranks[rank]
        iterations_ms, waited_ms, periods = rank_summary(trace)
        print(f"  rank {rank}: mean {statistics.mean(iterations_ms):7.1f} ms; per period "
              + " ".join(f"{p:5.0f}" for p in periods))
        print("    iteration ms " + " ".join(f"{t:4.0f}" for t in iterations_ms))
        if trace["events"]:
            print("    waited ms    " + " ".join(f"{w:4.0f}" for w in waited_ms))
    if tcp:
        for node, counters in enumerate(tcp):
            print(f"  node {node} TCP: " + ", ".join(f"{k} {v}" for k, v in counters.items()))


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    directory, names = sys.argv[1], set(sys.argv[2:])
    found = runs(directory, names)
    if not found:
        sys.exit(f"{directory}: no traces" + (f" named {', '.join(sorted(names))}" if names else ""))
    counters = {}  # cell -> scheme -> per-node TCP counters
    for path in glob.glob(os.path.join(directory, "*-tcp.json")):
        with open(path) as f:
            counters[os.path.basename(path)[:-len("-tcp.json")]] = json.load(f)
    for prefix, ranks in found.items():
        tcp = next((schemes.get(prefix[len(cell) + 1:]) for cell, schemes in counters.items()
                    if prefix.startswith(cell + "-")), None)
        summarize(prefix, ranks, tcp)


if __name__ == "__main__":
    main()
