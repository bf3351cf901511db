"""Where a single-GPU training step's time goes, kernel by kernel (torch.profiler), for the
configurations of measure_single_gpu.py: which kernels run, how many per step, their GPU
time, and how much of the step the GPU is busy at all (the rest waits for the host to
launch work).

    python3 validation/measure_op_breakdown.py -o breakdown.json [--only resnet50,gpt2-small]

Per configuration: `--warmup` steps, then `--steps` steps timed between CUDA events
(step_ms), then the same number of steps under torch.profiler; kernels are summed by name
over the profiled steps and divided by their number. busy_ms is the kernels' summed time
per step; step_ms - busy_ms is time the GPU idled.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import torch
from torch.profiler import ProfilerActivity, profile

from measure_single_gpu import CONFIGS, Built, timed_ms, training_step


def breakdown(built: Built, optimizer_name: str, batch_size: int, dtype: str, warmup: int,
              steps: int, device: torch.device) -> dict[str, Any]:
    one_step = training_step(built, optimizer_name, batch_size, dtype, device)
    step_ms = timed_ms(one_step, warmup, steps)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            one_step()
        torch.cuda.synchronize()
    kernels: dict[str, dict[str, float]] = {}
    for event in prof.events():
        if event.device_type != torch.autograd.DeviceType.CUDA:
            continue
        entry = kernels.setdefault(event.name, {"count": 0.0, "ms": 0.0})
        entry["count"] += 1.0 / steps
        entry["ms"] += event.time_range.elapsed_us() / 1e3 / steps
    del one_step
    torch.cuda.empty_cache()
    ranked = sorted(kernels.items(), key=lambda item: -item[1]["ms"])
    busy_ms = sum(k["ms"] for k in kernels.values())
    return {
        "step_ms": round(step_ms, 3),
        "busy_ms": round(busy_ms, 3),
        "kernels_per_step": round(sum(k["count"] for k in kernels.values()), 1),
        "kernels": [{"name": name[:160], "count": round(k["count"], 2), "ms": round(k["ms"], 4)}
                    for name, k in ranked[:40]],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", required=True)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--only", default="", help="comma-separated model names (default: all)")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("measure_op_breakdown: no CUDA device", file=sys.stderr)
        return 2
    device = torch.device("cuda")
    wanted = {name for name in args.only.split(",") if name}
    results: list[dict[str, Any]] = []
    for name, builder, optimizer_name, batch_size, dtypes in CONFIGS:
        if wanted and name not in wanted:
            continue
        for dtype in dtypes:
            result = breakdown(builder(name), optimizer_name, batch_size, dtype, args.warmup, args.steps, device)
            result = {"model": name, "dtype": dtype, "batch_per_gpu": batch_size, **result}
            print(f"{name} {dtype}: step {result['step_ms']} ms, GPU busy {result['busy_ms']} ms, "
                  f"{result['kernels_per_step']} kernels", flush=True)
            results.append(result)
    with open(args.output, "w") as f:
        json.dump({"gpu": torch.cuda.get_device_name(device), "torch": torch.__version__, "results": results}, f,
                  indent=1)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
