"""Reads the traces that `harness.py --trace DIR` keeps and prints, per run and rank, each
timed iteration's duration with the step of the period it ran, the mean per whole period,
and for decentralized training how long the rank waited for each step's exchanges: enough
to tell a steady run from one that changes regime part-way, and which exchange a slow
iteration waited for. For DDP it prints where an iteration's time goes: forward, backward
until the first bucket's all-reduce is launched, the buckets in flight from that launch to
the last one's end, the rest of backward and the optimizer step, and when each bucket's
all-reduce was launched and ended after backward began (which places a gap: a late launch
is slow compute, a late end a slow exchange), and where the trace folder has the link
emulator's timeline, how busy each node's link was over the same stretch of every iteration
(whether the bytes were on the wire, or waited for their senders); for decentralized
training, over the rank's periods (whether a node's link carries its ranks' crossings at
once or in turns, and whether it ever idles). The node's TCP counters
over the run follow (retransmissions and timeouts: a lossy transport, not the model, would
explain a stall).

  python3 validation/trace_summary.py DIR [NAME ...]

NAME is a run's prefix, e.g. 4x1-0.1-100-alternating-exp-ring (default: every run in DIR).
"""

from __future__ import annotations

import bisect
import glob
import json
import os
import re
import statistics
import sys
from collections.abc import Collection, Sequence
from typing import Any

# One rank's trace as train.py writes it (JSON).
Trace = dict[str, Any]
# One node link's transmissions as linkemu writes them (--timeline): (start s, end s), sorted.
Transmissions = list[tuple[float, float]]

LINK_BIN_MS = 2.0    # the link's busy share is printed per bin of this width ...
LINK_SPAN_MS = 50.0  # ... from the start of backward to this far after it
PERIOD_BINS = 20     # decentralized training: bins per period of its topology


def runs(directory: str, names: Collection[str]) -> dict[str, dict[int, Trace]]:
    found: dict[str, dict[int, Trace]] = {}
    for path in sorted(glob.glob(os.path.join(directory, "*-rank*.json"))):
        match = re.match(r"(.*)-rank(\d+)\.json$", os.path.basename(path))
        if match is None:
            continue  # not a rank's trace
        prefix, rank = match.groups()
        if not names or prefix in names:
            with open(path) as f:
                found.setdefault(prefix, {})[int(rank)] = json.load(f)
    return found


def rank_summary(trace: Trace) -> tuple[list[float], list[float], list[float]]:
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


def ddp_phases(trace: Trace) -> dict[str, Any] | None:
    """A DDP rank's mean phases over its traced iterations (ms): `forward`, `to_first_launch`
    (backward until the first bucket's all-reduce is launched), `buckets_in_flight` (from
    that launch to the end of the last bucket's), `after_last_bucket` (the rest of
    backward), `optimizer`, `bucket_ms`, each bucket's mean all-reduce from launch to end,
    and `bucket_launch_end_ms`, each bucket's mean launch and end after backward began.
    None for a trace without DDP's phases."""
    of = {name: [e for e in trace["events"] if e["event"] == name]
          for name in ("forward", "backward", "optimizer", "allreduce")}
    phases: dict[str, list[float]] = {"forward": [], "to_first_launch": [], "buckets_in_flight": [],
                                      "after_last_bucket": [], "optimizer": []}
    per_bucket: dict[int, list[float]] = {}
    launch_end: dict[int, list[tuple[float, float]]] = {}
    for forward, backward, optimizer in zip(of["forward"], of["backward"], of["optimizer"]):
        mine = [e for e in of["allreduce"] if backward["t0_s"] <= e["t0_s"] <= backward["t1_s"]]
        if not mine:
            continue
        first = min(e["t0_s"] for e in mine)
        last = max(e["t1_s"] for e in mine)
        phases["forward"].append(forward["t1_s"] - forward["t0_s"])
        phases["to_first_launch"].append(first - backward["t0_s"])
        phases["buckets_in_flight"].append(last - first)
        phases["after_last_bucket"].append(backward["t1_s"] - last)
        phases["optimizer"].append(optimizer["t1_s"] - optimizer["t0_s"])
        for e in mine:
            per_bucket.setdefault(e["bucket"], []).append(e["t1_s"] - e["t0_s"])
            launch_end.setdefault(e["bucket"], []).append((e["t0_s"] - backward["t0_s"], e["t1_s"] - backward["t0_s"]))
    if not phases["forward"]:
        return None
    summary: dict[str, Any] = {name: statistics.mean(values) * 1e3 for name, values in phases.items()}
    summary["bucket_ms"] = [statistics.mean(per_bucket[b]) * 1e3 for b in sorted(per_bucket)]
    summary["bucket_launch_end_ms"] = [(statistics.mean(t0 for t0, _ in launch_end[b]) * 1e3,
                                        statistics.mean(t1 for _, t1 in launch_end[b]) * 1e3)
                                       for b in sorted(launch_end)]
    return summary


def read_timeline(path: str) -> dict[int, Transmissions]:
    """linkemu's --timeline file: per queue (node i's egress is queue i), every packet's
    transmission as (start, end) in seconds of CLOCK_MONOTONIC (Python's perf_counter on
    Linux, the clock train.py's traces use), sorted by start."""
    links: dict[int, Transmissions] = {}
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            queue, start_ns, end_ns, _ = line.split()
            links.setdefault(int(queue), []).append((int(start_ns) * 1e-9, int(end_ns) * 1e-9))
    for sent in links.values():
        sent.sort()
    return links


def busy_shares(sent: Transmissions, starts_s: Sequence[float], bin_ms: float = LINK_BIN_MS,
                span_ms: float = LINK_SPAN_MS) -> list[float]:
    """The link's mean busy share in each bin of `bin_ms` over `span_ms` after each of
    `starts_s`: the time its transmitter was sending inside the bin over the bin's width,
    averaged over the starts."""
    bins = int(round(span_ms / bin_ms))
    width = bin_ms * 1e-3
    busy = [0.0] * bins
    starts_of_sent = [a for a, _ in sent]
    longest = max((b - a for a, b in sent), default=0.0)
    for t0 in starts_s:
        first = bisect.bisect_left(starts_of_sent, t0 - longest)
        for a, b in sent[first:]:
            if a >= t0 + bins * width:
                break
            lo, hi = max(a, t0), min(b, t0 + bins * width)
            k = int((lo - t0) // width) if lo > t0 else 0
            while lo < hi and k < bins:
                edge = min(hi, t0 + (k + 1) * width)
                busy[k] += edge - lo
                lo, k = edge, k + 1
    return [x / (width * len(starts_s)) if starts_s else 0.0 for x in busy]


def period_starts(trace: Trace) -> tuple[list[float], float]:
    """A decentralized rank's whole periods: when each began (s, the start of its first
    step's iteration) and their mean length (ms)."""
    period = trace["steps_per_period"]
    starts = trace["iteration_starts_s"]
    whole = range(0, len(starts) - period + 1, period)
    lengths = [sum(trace["iteration_s"][i:i + period]) for i in whole]
    return [starts[i] for i in whole], 1e3 * statistics.mean(lengths)


def backward_starts_s(trace: Trace) -> list[float]:
    """When each traced DDP iteration's backward began (s)."""
    return [e["t0_s"] for e in trace["events"] if e["event"] == "backward"]


def summarize(prefix: str, ranks: dict[int, Trace], tcp: list[dict[str, int]] | None,
              links: dict[int, Transmissions] | None = None) -> None:
    print(f"{prefix}")
    for rank in sorted(ranks):
        trace = ranks[rank]
        iterations_ms, waited_ms, periods = rank_summary(trace)
        print(f"  rank {rank}: mean {statistics.mean(iterations_ms):7.1f} ms; per period "
              + " ".join(f"{p:5.0f}" for p in periods))
        print("    iteration ms " + " ".join(f"{t:4.0f}" for t in iterations_ms))
        ddp = ddp_phases(trace)
        if ddp:
            print(f"    DDP means: forward {ddp['forward']:.1f} ms, backward to the first bucket's launch "
                  f"{ddp['to_first_launch']:.1f}, buckets in flight {ddp['buckets_in_flight']:.1f}, backward after "
                  f"the last bucket {ddp['after_last_bucket']:.1f}, optimizer {ddp['optimizer']:.1f}; each bucket "
                  + " ".join(f"{b:.1f}" for b in ddp["bucket_ms"]))
            print("    DDP buckets after backward began, launched / ended (ms): "
                  + ", ".join(f"{t0:.1f} / {t1:.1f}" for t0, t1 in ddp["bucket_launch_end_ms"]))
            for node, sent in sorted((links or {}).items()):
                shares = busy_shares(sent, backward_starts_s(trace))
                print(f"    node {node}'s link busy after backward began, % per {LINK_BIN_MS:g} ms: "
                      + " ".join(f"{100 * x:.0f}" for x in shares))
        elif trace["events"]:
            print("    waited ms    " + " ".join(f"{w:4.0f}" for w in waited_ms))
        if not ddp and links and len(iterations_ms) >= trace["steps_per_period"]:
            starts, period_ms = period_starts(trace)
            bin_ms = period_ms / PERIOD_BINS
            for node, sent in sorted(links.items()):
                shares = busy_shares(sent, starts, bin_ms=bin_ms, span_ms=period_ms)
                print(f"    node {node}'s link busy over a period from this rank's first step, % per "
                      f"{bin_ms:.0f} ms: " + " ".join(f"{100 * x:.0f}" for x in shares))
    if tcp:
        for node, counters in enumerate(tcp):
            print(f"  node {node} TCP: " + ", ".join(f"{k} {v}" for k, v in counters.items()))


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    directory, names = sys.argv[1], set(sys.argv[2:])
    found = runs(directory, names)
    if not found:
        sys.exit(f"{directory}: no traces" + (f" named {', '.join(sorted(names))}" if names else ""))
    counters = {}  # cell -> scheme -> per timing, per node TCP counters (older reports: per node)
    for path in glob.glob(os.path.join(directory, "*-tcp.json")):
        with open(path) as f:
            counters[os.path.basename(path)[:-len("-tcp.json")]] = json.load(f)
    timelines = {os.path.basename(path)[:-len("-link-timeline.txt")]: path
                 for path in glob.glob(os.path.join(directory, "*-link-timeline.txt"))}
    for prefix, ranks in found.items():
        tcp = next((timing_counters(schemes, prefix[len(cell) + 1:]) for cell, schemes in counters.items()
                    if prefix.startswith(cell + "-")), None)
        timeline = next((path for cell, path in timelines.items() if prefix.startswith(cell + "-")), None)
        summarize(prefix, ranks, tcp, read_timeline(timeline) if timeline else None)


def timing_counters(schemes: dict[str, Any], run: str) -> list[dict[str, int]] | None:
    """A traced run's per-node TCP counters: `run` is SCHEME, or SCHEME-tK for the run's
    K-th timing (the harness times every run several times and traces each)."""
    scheme, timing = run, 0
    match = re.fullmatch(r"(.+)-t(\d+)", run)
    if match and match.group(1) in schemes:
        scheme, timing = match.group(1), int(match.group(2)) - 1
    counted = schemes.get(scheme)
    if not counted or isinstance(counted[0], dict):  # absent, or one timing per run (an older trace)
        return counted if timing == 0 else None
    return counted[timing] if timing < len(counted) else None


if __name__ == "__main__":
    main()
