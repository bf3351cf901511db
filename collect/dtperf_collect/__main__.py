"""python3 -m dtperf_collect --model my_module:build --batch 32 --iters 30 -o my-model.json

`my_module:build` names a function (the module is imported from the current folder or
PYTHONPATH) that returns (model, batch_fn) or (model, batch_fn, loss_fn), where
batch_fn(batch) returns (inputs, target); the loss defaults to cross-entropy for integer
targets and mean squared error otherwise.
"""

import argparse
import importlib
import os
import sys

from .profiler import profile, write_model


def _load(spec):
    if ":" not in spec:
        raise SystemExit(f"dtperf_collect: error: --model: expected MODULE:FUNCTION, got '{spec}'")
    module_name, function_name = spec.split(":", 1)
    sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        raise SystemExit(f"dtperf_collect: error: --model: cannot import '{module_name}': {e}")
    build = getattr(module, function_name, None)
    if build is None:
        raise SystemExit(f"dtperf_collect: error: --model: '{module_name}' has no '{function_name}'")
    built = build()
    if not isinstance(built, tuple) or len(built) not in (2, 3):
        raise SystemExit(f"dtperf_collect: error: --model: {spec}() must return (model, batch_fn) or "
                         "(model, batch_fn, loss_fn)")
    return built


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m dtperf_collect",
                                     description="Measure a PyTorch model for dtperf (a dtperf.model/1 layer file).")
    parser.add_argument("--model", required=True, help="MODULE:FUNCTION returning (model, batch_fn[, loss_fn])")
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
    if args.batch <= 0 or args.iters < 3 or args.warmup < 0:
        raise SystemExit("dtperf_collect: error: --batch must be positive, --iters at least 3, --warmup >= 0")
    built = _load(args.model)
    model, batch_fn = built[0], built[1]
    loss_fn = built[2] if len(built) == 3 else None
    try:
        document = profile(model, batch_fn, batch=args.batch, iters=args.iters, warmup=args.warmup,
                           device=args.device, optimizer=args.optimizer, lr=args.lr, loss_fn=loss_fn,
                           name=args.name, sample_unit=args.sample_unit, bucket_cap_mb=args.bucket_cap_mb)
    except ValueError as e:
        raise SystemExit(f"dtperf_collect: error: {e}")
    write_model(document, args.output)
    m = document["measured"]
    print(f"# {document['name']}: {len(document['layers'])} tensors, iteration {m['single_gpu_iteration_ms']:.3f} ms "
          f"(forward {m['forward_ms']:.3f}, backward {m['backward_ms']:.3f}, optimizer {m['optimizer_ms']:.3f}) "
          f"at batch {args.batch} on {m['device']}; wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
