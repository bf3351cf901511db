#!/usr/bin/env python3
"""Checks of the emulated-network calibration test.

  check_calibration.py raw RAW.json --rate-gbps R --delay-us D
      Validates RAW.json against calibrate/FORMAT.md (keys, units, ordering, busbw
      arithmetic, result checks) and fits the pair_inter sendrecv points (one pair per
      node) with time = alpha + bytes / beta by least squares on relative errors, the way
      `dtperf fit` is specified to. Fails unless beta is within 10 % of R and alpha within
      20 % of D.
  check_calibration.py profile PROFILE.json --rate-gbps R --delay-us D
      Checks a profile written by `dtperf fit`: inter_node.nic_gbps *
      inter_node.transport_efficiency within 10 % of R, inter_node.latency_us within 20 %
      of D.
Exit code 0 when every check passes, 1 otherwise.
"""
import argparse
import json
import sys

BANDWIDTH_TOLERANCE = 0.10
LATENCY_TOLERANCE = 0.20

TOP_KEYS = ["schema", "tool", "backend", "created", "arguments", "environment", "versions", "world",
            "budget_s", "elapsed_s", "truncated", "collectives", "gemm", "copy", "contention", "iteration_spread"]
WORLD_KEYS = ["ranks", "nodes", "ranks_per_node", "hosts", "placement"]
PLACEMENT_KEYS = ["rank", "host", "local_rank", "device", "device_name", "bus_id"]
COLLECTIVE_KEYS = ["collective", "group", "ranks", "nodes", "concurrent_per_node", "dtype",
                   "warmup_iterations", "iterations", "points"]
POINT_KEYS = ["bytes", "count", "time_us", "time_us_min", "time_us_max", "algbw_GB_per_s",
              "busbw_GB_per_s", "correct"]
OPTIONAL_POINT_KEYS = {"time_us_median"}  # after time_us_max where calls are timed one by one
SPREAD_KEYS = ["rank", "iterations", "mean_us", "stddev_us", "cv", "median_us", "robust_cv"]
GROUPS = {"world", "node", "one_per_node", "pair_intra", "pair_inter", "two_nodes"}

failures = []


def expect(condition, message):
    if not condition:
        failures.append(message)
    return condition


def close(a, b, relative=1e-6):
    return abs(a - b) <= relative * max(abs(a), abs(b), 1e-30)


def check_point(where, entry, point, previous_bytes):
    expect([k for k in point if k not in OPTIONAL_POINT_KEYS] == POINT_KEYS, f"{where}: keys {list(point)}")
    if "time_us_median" in point:
        expect(list(point).index("time_us_median") == 5, f"{where}: time_us_median out of place")
        expect(point["time_us_median"] > 0, f"{where}: time_us_median not positive")
    expect(point["bytes"] > previous_bytes, f"{where}: bytes not strictly increasing")
    expect(point["count"] * 4 == point["bytes"], f"{where}: count is not bytes / 4")
    expect(point["correct"] is True, f"{where}: result check failed")
    expect(point["time_us_min"] <= point["time_us"] == point["time_us_max"], f"{where}: min <= time = max broken")
    algbw = point["bytes"] / (point["time_us"] * 1e-6) / 1e9
    n = entry["ranks"]
    factor = 2 * (n - 1) / n if entry["collective"] == "all_reduce" else 1.0
    expect(close(point["algbw_GB_per_s"], algbw, 1e-4), f"{where}: algbw is not bytes / time")
    expect(close(point["busbw_GB_per_s"], algbw * factor, 1e-4), f"{where}: busbw is not algbw * {factor}")


def check_format(raw):
    expect(list(raw) == TOP_KEYS, f"top-level keys {list(raw)}")
    expect(raw["schema"] == "dtperf.calibration/3", "schema")
    expect(raw["backend"] == "host", "backend")
    world = raw["world"]
    expect(list(world) == WORLD_KEYS, f"world keys {list(world)}")
    expect(world["ranks"] == 4 and world["nodes"] == 2 and world["ranks_per_node"] == 2, "world shape")
    expect(world["hosts"] == ["node0", "node1"], f"hosts {world['hosts']}")
    for place in world["placement"]:
        expect(list(place) == PLACEMENT_KEYS, f"placement keys {list(place)}")
    for entry in raw["collectives"]:
        where = f"{entry['collective']} {entry['group']} x{entry['concurrent_per_node']}"
        expect(list(entry) == COLLECTIVE_KEYS, f"{where}: keys {list(entry)}")
        expect(entry["group"] in GROUPS, f"{where}: unknown group")
        expect(len(entry["points"]) > 0, f"{where}: no points")
        previous = 0
        for point in entry["points"]:
            check_point(f"{where} {point['bytes']} B", entry, point, previous)
            previous = point["bytes"]
    expect(raw["gemm"] == [] and raw["copy"] == [] and raw["contention"] == [],
           "host backend wrote gemm, copy or contention entries")
    expect(len(raw["iteration_spread"]) == 4, "iteration_spread has not one entry per rank")
    for spread in raw["iteration_spread"]:
        expect(list(spread) == SPREAD_KEYS, f"iteration_spread keys {list(spread)}")


def seconds(point):
    """The time dtperf fit uses: the median per call where there is one, else the mean."""
    return point.get("time_us_median", point["time_us"]) * 1e-6


def fit_alpha_beta(points):
    """Least squares of time = alpha + bytes / beta on relative errors: rows weighted 1/t."""
    s11 = s12 = s22 = r1 = r2 = 0.0
    for p in points:
        t = seconds(p)
        w = 1.0 / (t * t)
        x = float(p["bytes"])
        s11 += w
        s12 += w * x
        s22 += w * x * x
        r1 += w * t
        r2 += w * x * t
    det = s11 * s22 - s12 * s12
    alpha_s = (r1 * s22 - r2 * s12) / det
    seconds_per_byte = (s11 * r2 - s12 * r1) / det
    residuals = [abs(alpha_s + seconds_per_byte * p["bytes"] - seconds(p)) / seconds(p) for p in points]
    return alpha_s, 1.0 / seconds_per_byte, max(residuals)


def find_entry(raw, collective, group, concurrent):
    for entry in raw["collectives"]:
        if (entry["collective"], entry["group"], entry["concurrent_per_node"]) == (collective, group, concurrent):
            return entry
    return None


def report(name, measured, configured, tolerance, unit, gate=True):
    deviation = measured / configured - 1.0
    ok = abs(deviation) <= tolerance
    verdict = ("ok" if ok else "FAIL") if gate else "(for information)"
    print(f"{name}: {measured:.4g} {unit} vs configured {configured:.4g} {unit} "
          f"({deviation:+.1%}, tolerance {tolerance:.0%}) {verdict}")
    if gate:
        expect(ok, f"{name} off by {deviation:+.1%}")


def check_raw(path, rate_gbps, delay_us):
    with open(path) as f:
        raw = json.load(f)
    check_format(raw)
    print(f"raw file: {len(raw['collectives'])} collective entries, elapsed {raw['elapsed_s']:.1f} s "
          f"of {raw['budget_s']:.0f} s, truncated {raw['truncated']}")
    pair = find_entry(raw, "sendrecv", "pair_inter", 1)
    if not expect(pair is not None and len(pair["points"]) >= 6, "no pair_inter sendrecv sweep to fit"):
        return
    alpha_s, beta_bytes_per_s, worst = fit_alpha_beta(pair["points"])
    print(f"pair_inter sendrecv fit over {len(pair['points'])} points "
          f"({pair['points'][0]['bytes']} B .. {pair['points'][-1]['bytes']} B): "
          f"worst relative residual {worst:.1%}")
    # One straight line through all sizes, independent of dtperf: shown beside dtperf's
    # segmented fit, which is what the test checks.
    report("inter-node bandwidth (one-line fit)", 8 * beta_bytes_per_s / 1e9, rate_gbps, BANDWIDTH_TOLERANCE,
           "Gbit/s", gate=False)
    report("inter-node latency (one-line fit)", alpha_s * 1e6, delay_us, LATENCY_TOLERANCE, "us", gate=False)
    across = find_entry(raw, "all_reduce", "one_per_node", 1)
    if across is not None:
        largest = across["points"][-1]
        print(f"one_per_node all_reduce at {largest['bytes']} B: busbw {8 * largest['busbw_GB_per_s']:.3f} Gbit/s")


def check_profile(path, rate_gbps, delay_us):
    with open(path) as f:
        profile = json.load(f)
    inter = profile.get("inter_node", {})
    if not expect("nic_gbps" in inter and "latency_us" in inter, "profile has no inter_node.nic_gbps/latency_us"):
        return
    effective_gbps = inter["nic_gbps"] * inter.get("transport_efficiency", 1.0)
    report("inter-node bandwidth (dtperf fit)", effective_gbps, rate_gbps, BANDWIDTH_TOLERANCE, "Gbit/s")
    report("inter-node latency (dtperf fit)", inter["latency_us"], delay_us, LATENCY_TOLERANCE, "us")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=["raw", "profile"])
    parser.add_argument("path")
    parser.add_argument("--rate-gbps", type=float, required=True)
    parser.add_argument("--delay-us", type=float, required=True)
    args = parser.parse_args()
    try:
        if args.what == "raw":
            check_raw(args.path, args.rate_gbps, args.delay_us)
        else:
            check_profile(args.path, args.rate_gbps, args.delay_us)
    except (OSError, ValueError, KeyError, TypeError) as error:
        failures.append(f"cannot check {args.path}: {error!r}")
    for failure in failures:
        print(f"FAIL: {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
