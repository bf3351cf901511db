"""python3 -m dtperf_collect --model my_module:build --batch 32 --iters 30 -o my-model.json

`my_module:build` names a function that returns (model, batch_fn) or (model, batch_fn,
loss_fn), where batch_fn(batch) returns (inputs, target); the loss defaults to cross-entropy
for integer targets and mean squared error otherwise. The module is imported from the
current folder (`python3 -m` puts it first on the module search path) or PYTHONPATH; a
path to a Python file instead (`path/to/my_module.py:build`) loads that file.
"""

from __future__ import annotations

import argparse
import importlib
import math
import importlib.util
import os
import sys
from types import ModuleType
from typing import Any, NoReturn

from .profiler import profile, write_model


def _import(module_name: str) -> ModuleType:
    """MODULE by the import system; FILE.py loaded from that file, under its base name."""
    if not module_name.endswith(".py"):
        return importlib.import_module(module_name)
    if not os.path.isfile(module_name):
        raise ImportError(f"no such file: {module_name}")
    name = os.path.splitext(os.path.basename(module_name))[0]
    if name in sys.modules:
        raise ImportError(f"a module named '{name}' is already loaded")
    spec = importlib.util.spec_from_file_location(name, os.path.abspath(module_name))
    if spec is None or spec.loader is None:
        raise ImportError(f"not a Python file: {module_name}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # as an import would (pickle and dataclasses look it up)
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def _usage_error(message: str) -> SystemExit:
    """A bad option or argument: one line on stderr and exit code 2, as dtperf's own."""
    print(f"dtperf_collect: error: {message}", file=sys.stderr)
    return SystemExit(2)


class _Parser(argparse.ArgumentParser):
    """argparse's own errors (a missing or mistyped option) as one line and exit code 2,
    without the usage block: as every other error of the collector and of dtperf."""

    def error(self, message: str) -> NoReturn:
        raise _usage_error(f"{message} (python3 -m dtperf_collect --help lists the options)")


# The most the collector takes: dtperf's own limit on a batch (docs/MANUAL.md, "Limits"),
# and a million timed iterations (hours of a large model; a median needs a few dozen).
MAX_BATCH = 10**9
MAX_ITERS = 10**6


def _check_options(args: argparse.Namespace) -> None:
    """Everything about the options that can be checked before the model is built."""
    if args.batch <= 0 or args.batch > MAX_BATCH:
        raise _usage_error(f"--batch must be a number of samples from 1 to {MAX_BATCH}, got {args.batch}")
    if args.iters < 3 or args.iters > MAX_ITERS:
        raise _usage_error(f"--iters must be from 3 (medians and quantiles need a few) to {MAX_ITERS}, got {args.iters}")
    if args.warmup < 0:
        raise _usage_error(f"--warmup must be 0 or more, got {args.warmup}")
    for name, value in (("--lr", args.lr), ("--bucket-cap-mb", args.bucket_cap_mb)):
        if not (math.isfinite(value) and value > 0):
            raise _usage_error(f"{name} must be a positive finite number, got {value}")
    if os.path.isdir(args.output):
        raise _usage_error(f"-o: {args.output} is a folder; give the file to write")
    folder = os.path.dirname(os.path.abspath(args.output))
    if not os.path.isdir(folder):
        raise _usage_error(f"-o: the folder {folder} does not exist")
    if not os.access(folder, os.W_OK):
        raise _usage_error(f"-o: the folder {folder} is not writable")


def _device(text: str) -> Any:
    """--device as a torch.device that exists here."""
    import torch
    try:
        device = torch.device(text)
    except (RuntimeError, ValueError):
        raise _usage_error(f"--device: '{text}' is not a device (cpu, cuda, cuda:N)")
    if device.type == "cuda":
        if not torch.cuda.is_available():
            raise _usage_error(f"--device {text}: PyTorch sees no CUDA device here")
        if device.index is not None and device.index >= torch.cuda.device_count():
            raise _usage_error(f"--device {text}: there are {torch.cuda.device_count()} CUDA device(s), 0 to "
                               f"{torch.cuda.device_count() - 1}")
    elif device.type != "cpu":
        raise _usage_error(f"--device: '{text}' is not a device the collector times (cpu, cuda, cuda:N)")
    return device


def _load(spec: str) -> tuple[Any, ...]:
    if ":" not in spec:
        raise _usage_error(f"--model: expected MODULE:FUNCTION, got '{spec}'")
    module_name, function_name = spec.split(":", 1)
    try:
        module = _import(module_name)
    except ImportError as e:
        raise _usage_error(f"--model: cannot import '{module_name}': {e}")
    build = getattr(module, function_name, None)
    if build is None:
        raise _usage_error(f"--model: '{module_name}' has no '{function_name}'")
    built = build()
    if not isinstance(built, tuple) or len(built) not in (2, 3):
        raise _usage_error(f"--model: {spec}() must return (model, batch_fn) or (model, batch_fn, loss_fn)")
    return built


def main(argv: list[str] | None = None) -> int:
    parser = _Parser(prog="python3 -m dtperf_collect",
                                     description="Measure a PyTorch model for dtperf (a dtperf.model/1 layer file).")
    parser.add_argument("--model", required=True,
                        help="MODULE:FUNCTION or FILE.py:FUNCTION returning (model, batch_fn[, loss_fn])")
    parser.add_argument("--batch", type=int, default=32, help="samples per iteration (default 32)")
    parser.add_argument("--iters", type=int, default=30, help="timed iterations (default 30)")
    parser.add_argument("--warmup", type=int, default=5, help="untimed iterations first (default 5)")
    parser.add_argument("--device", default="cpu", help="cpu or cuda[:N] (default cpu)")
    parser.add_argument("--optimizer", default="sgd-momentum", choices=["sgd", "sgd-momentum", "adam"])
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--bucket-cap-mb", type=float, default=25.0, help="DDP bucket_cap_mb (MiB)")
    parser.add_argument("--name", help="model name in the file (default: the module's class name)")
    parser.add_argument("--sample-unit", default="sample", help="what one sample is (image, token, ...)")
    parser.add_argument("-o", "--output", required=True, help="where to write the layer file")
    args = parser.parse_args(argv)
    if args.name is not None:  # bytes that are not UTF-8 (a name from a byte string) as U+FFFD, as dtperf writes them
        args.name = args.name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    _check_options(args)
    device = _device(args.device)
    built = _load(args.model)
    model, batch_fn = built[0], built[1]
    loss_fn = built[2] if len(built) == 3 else None
    try:
        document = profile(model, batch_fn, batch=args.batch, iters=args.iters, warmup=args.warmup,
                           device=device, optimizer=args.optimizer, lr=args.lr, loss_fn=loss_fn,
                           name=args.name, sample_unit=args.sample_unit, bucket_cap_mb=args.bucket_cap_mb)
    except ValueError as e:
        raise _usage_error(str(e))
    except MemoryError:
        raise _usage_error(f"--batch {args.batch}: the model's iteration does not fit in memory on {device}")
    except RuntimeError as e:
        if not any(words in str(e) for words in ("out of memory", "not enough memory", "can't allocate memory")):
            raise
        raise _usage_error(f"--batch {args.batch}: the model's iteration does not fit in memory on {device}")
    write_model(document, args.output)
    m = document["measured"]
    print(f"# {document['name']}: {len(document['layers'])} tensors, iteration {m['single_gpu_iteration_ms']:.3f} ms "
          f"(forward {m['forward_ms']:.3f}, backward {m['backward_ms']:.3f}, optimizer {m['optimizer_ms']:.3f}) "
          f"at batch {args.batch} on {m['device']}; wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
