"""Measured convolution times against the compute model's roofline for them, pass by pass.

    python3 validation/conv_roofline.py [--rates FILE] [--profile FILE] [--kernels FILE]
                                        [--detail MODEL:DTYPE]

Reads the convolutions timed alone on one GPU (measure_conv_rates.py; default
validation/data/single-gpu/h200-conv-rates.json) and a calibrated profile of the same GPU
(default profiles/calibrated/h200-1gpu.json), and prints, per model and dtype, the
measured time of all the model's convolutions (each distinct shape times its count in the
model, the three passes) beside what the compute model prices them at, and their ratio,
in total and per pass. --detail adds one line per shape and pass.

A second table sets the same price beside the convolutions' time inside a training step:
the kernels of a profiled step (measure_op_breakdown.py; default
validation/data/single-gpu/h200-kernels.json) whose names are convolution or matrix-product
kernels (cuDNN's fprop, dgrad and wgrad, implicit-GEMM and Winograd kernels, cuBLAS's and
CUTLASS's GEMMs: the classifier's products are among them). That file lists a step's 40
longest kernels and its busy time; the time of the kernels it does not list bounds the
convolutions' from above, so both ends are printed.

The roofline is the one `src/core/compute.cpp` gives a matrix product that runs alone:
    t = max(FLOPs / (peak x efficiency(FLOPs)), bytes / copy bandwidth)
with the profile's peak of the dtype, its measured GEMM efficiency curve for the dtype
(interpolated on log FLOPs, held at its ends, as `interpolate.hpp` does) and its measured
copy bandwidth. Each pass reads two of the three tensors (input, weights, output or their
gradients) and writes the third, so each moves input + output + weights once, at the
dtype's element size (2 bytes in fp16 and bf16, 4 in fp32 and tf32). A 1 x 1 convolution
of stride 2 reads only a quarter of its input; it is counted whole, which prices those
few shapes' traffic high, never low. The FLOPs are the measurement file's
(2 N H_out W_out C_out C_in k^2 per pass).

Only the standard library: it runs wherever the tests run.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PASSES = ("forward", "input gradient", "weight gradient")
DTYPES = ("fp32", "tf32", "fp16", "bf16")


def interpolate_log_x(points: list[list[float]], x: float) -> float:
    if x <= points[0][0]:
        return points[0][1]
    if x >= points[-1][0]:
        return points[-1][1]
    for (x0, y0), (x1, y1) in zip(points, points[1:]):
        if x <= x1:
            return y0 + math.log(x / x0) / math.log(x1 / x0) * (y1 - y0)
    return points[-1][1]


class Roofline:
    def __init__(self, profile: dict) -> None:
        self.peak_flops_per_s = {k: v * 1e12 for k, v in profile["gpu"]["peak_tflops"].items()}
        calibration = profile.get("calibration", {})
        if "copy_bandwidth_GB_per_s" in calibration:
            self.bytes_per_s = calibration["copy_bandwidth_GB_per_s"] * 1e9
        else:
            self.bytes_per_s = profile["gpu"]["memory_bandwidth_GB_per_s"] * 1e9 * profile["compute"]["memory_efficiency"]
        self.curves = {c["dtype"]: c["points_gflop_efficiency"] for c in calibration.get("gemm", [])}
        self.efficiency = profile["compute"]["gemm_efficiency"]
        self.half_efficiency_gflop = profile["compute"]["half_efficiency_gflop"]

    def efficiency_at(self, dtype: str, gflop: float) -> float:
        if dtype in self.curves:
            return interpolate_log_x(self.curves[dtype], gflop)
        return self.efficiency * gflop / (gflop + self.half_efficiency_gflop)

    def time_s(self, dtype: str, flops: float, bytes_moved: float) -> tuple[float, str]:
        arithmetic = flops / (self.peak_flops_per_s[dtype] * self.efficiency_at(dtype, flops / 1e9))
        memory = bytes_moved / self.bytes_per_s
        return (arithmetic, "arithmetic") if arithmetic >= memory else (memory, "memory")


CONV_KERNEL_MARKS = ("fprop", "dgrad", "wgrad", "implicit", "conv", "winograd", "xmma", "nvjet", "gemm", "cutlass")


def is_conv_kernel(name: str) -> bool:
    lower = name.lower()
    return any(mark in lower for mark in CONV_KERNEL_MARKS)


def in_training_ms(result: dict) -> tuple[float, float]:
    """The listed convolution and GEMM kernels' time per step, and that plus every unlisted
    kernel's (the listed kernels' time short of the busy time)."""
    listed = sum(k["ms"] for k in result["kernels"] if is_conv_kernel(k["name"]))
    unlisted = max(0.0, result["busy_ms"] - sum(k["ms"] for k in result["kernels"]))
    return listed, listed + unlisted


def bytes_moved(point: dict) -> float:
    element = 2 if point["dtype"] in ("fp16", "bf16") else 4
    side_out = -(-point["side"] // point["stride"])
    inputs = point["batch"] * point["side"] ** 2 * point["c_in"]
    outputs = point["batch"] * side_out ** 2 * point["c_out"]
    weights = point["c_in"] * point["c_out"] * point["kernel"] ** 2
    return element * (inputs + outputs + weights)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rates", default=str(ROOT / "validation/data/single-gpu/h200-conv-rates.json"))
    parser.add_argument("--profile", default=str(ROOT / "profiles/calibrated/h200-1gpu.json"))
    parser.add_argument("--kernels", default=str(ROOT / "validation/data/single-gpu/h200-kernels.json"))
    parser.add_argument("--detail", action="append", default=[], metavar="MODEL:DTYPE")
    args = parser.parse_args()
    try:
        rates = json.loads(Path(args.rates).read_text())
        roofline = Roofline(json.loads(Path(args.profile).read_text()))
        steps = json.loads(Path(args.kernels).read_text())["results"]
    except (OSError, ValueError, KeyError) as e:
        print(f"conv_roofline.py: {e}", file=sys.stderr)
        return 2

    # (model, dtype) -> pass -> [measured s, roofline s]; and the shapes measured per pass
    totals: dict = defaultdict(lambda: {p: [0.0, 0.0] for p in PASSES})
    shapes: dict = defaultdict(lambda: defaultdict(int))
    details: list[str] = []
    for point in rates["points"]:
        key = (point["model"], point["dtype"])
        measured = point["time_ms"] * 1e-3 * point["count"]
        model_s, bound = roofline.time_s(point["dtype"], point["flops"], bytes_moved(point))
        totals[key][point["pass"]][0] += measured
        totals[key][point["pass"]][1] += model_s * point["count"]
        shapes[key][point["pass"]] += 1
        if f"{point['model']}:{point['dtype']}" in args.detail:
            details.append(
                f"   {point['model']:<9} {point['dtype']:<5} {point['side']:>4} {point['c_in']:>5} {point['c_out']:>5}"
                f" {point['kernel']}x{point['kernel']}/{point['stride']} x{point['count']:<2} {point['pass']:<15}"
                f" {point['time_ms']:8.3f} {model_s * 1e3:8.3f} {point['time_ms'] * 1e-3 / model_s:6.2f}  {bound}")

    print(f"# convolutions timed alone ({Path(args.rates).name}) against the roofline of {Path(args.profile).name}")
    print("#  model      dtype  shapes  measured  roofline  ratio  forward  input-grad  weight-grad")
    print("#                              (ms)      (ms)            ratio       ratio        ratio")
    for model in sorted({m for m, _ in totals}):
        for dtype in DTYPES:
            if (model, dtype) not in totals:
                continue
            t = totals[(model, dtype)]
            measured = sum(v[0] for v in t.values())
            model_s = sum(v[1] for v in t.values())
            ratios = [t[p][0] / t[p][1] if t[p][1] > 0 else float("nan") for p in PASSES]
            counts = shapes[(model, dtype)]
            print(f"   {model:<9}  {dtype:<5} {counts['forward']:>6}  {measured * 1e3:8.1f}  {model_s * 1e3:8.1f}"
                  f"  {measured / model_s:5.2f}  {ratios[0]:7.2f}  {ratios[1]:10.2f}  {ratios[2]:11.2f}")
    print(f"# inside a training step ({Path(args.kernels).name}): convolution and GEMM kernels, listed and at most")
    print("#  model      dtype  batch  step  busy  in-training  roofline  ratio")
    print("#                           (ms)  (ms)         (ms)      (ms)")
    for result in steps:
        key = (result["model"], result["dtype"])
        if key not in totals or any(shapes[key][p] == 0 for p in PASSES):
            continue
        model_s = sum(v[1] for v in totals[key].values()) * 1e3
        low, high = in_training_ms(result)
        print(f"   {result['model']:<9}  {result['dtype']:<5} {result['batch_per_gpu']:>5} {result['step_ms']:5.1f}"
              f" {result['busy_ms']:5.1f}  {low:5.1f}-{high:5.1f}  {model_s:8.1f}  {low / model_s:.2f}-{high / model_s:.2f}")
    if details:
        print("#  model     dtype  side  c_in c_out  kxk/s count pass            measured roofline  ratio  bound")
        print("#                                                                   (ms)     (ms)")
        print("\n".join(details))
    return 0


if __name__ == "__main__":
    sys.exit(main())
