"""Per-tensor backward timing of a PyTorch model, as a dtperf.model/1 layer file."""

from __future__ import annotations

import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import torch

from .stats import quantile

SCHEMA = "dtperf.model/1"
# PyTorch DDP's bucket caps: the first bucket 1 MiB (dist._DEFAULT_FIRST_BUCKET_BYTES), then
# bucket_cap_mb (25 MiB by default).
FIRST_BUCKET_BYTES = 1024 * 1024

# batch_fn(batch) -> (inputs, target); inputs one tensor or a tuple of them.
BatchFn = Callable[[int], tuple[Any, Any]]
# loss_fn(output, target) -> the loss tensor.
LossFn = Callable[[Any, Any], Any]


class _Clock:
    """Timestamps in milliseconds that mean the same on CPU and CUDA: on CUDA an event is
    recorded on the current stream (when the work queued so far is done), on CPU the
    wall clock is read (the work is done when the call returns)."""

    def __init__(self, device: torch.device) -> None:
        self.cuda = device.type == "cuda"

    def mark(self) -> Any:
        if self.cuda:
            event = torch.cuda.Event(enable_timing=True)
            event.record()
            return event
        return time.perf_counter()

    def elapsed_ms(self, start: Any, end: Any) -> float:
        if self.cuda:
            return start.elapsed_time(end)
        return (end - start) * 1e3

    def sync(self) -> None:
        if self.cuda:
            torch.cuda.synchronize()


def _default_loss(output: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    if target.dtype in (torch.int64, torch.int32):
        return torch.nn.functional.cross_entropy(output, target)
    return torch.nn.functional.mse_loss(output, target)


def _make_optimizer(name: str, params: list[torch.Tensor], lr: float) -> torch.optim.Optimizer:
    if name == "sgd":
        return torch.optim.SGD(params, lr=lr)
    if name == "sgd-momentum":
        return torch.optim.SGD(params, lr=lr, momentum=0.9)
    if name == "adam":
        return torch.optim.Adam(params, lr=lr)
    raise ValueError(f"unknown optimizer '{name}': expected sgd, sgd-momentum or adam")


def ddp_buckets(named_params: Sequence[tuple[str, torch.Tensor]],
                bucket_cap_mb: float = 25.0) -> dict[str, int] | None:
    """The bucket index PyTorch DDP gives each parameter (0: the first all-reduced), by
    PyTorch's own assignment function with DDP's caps; None where torch.distributed is not
    built in."""
    import torch.distributed as dist

    if not dist.is_available():
        return None
    tensors = [p for _, p in named_params]
    caps = [FIRST_BUCKET_BYTES, int(bucket_cap_mb * 1024 * 1024)]
    indices, _ = dist._compute_bucket_assignment_by_size(tensors, caps, [False] * len(tensors))
    # DDP hands the reducer the buckets reversed: the last parameters' bucket goes first.
    buckets = list(reversed(indices))
    owner: dict[str, int] = {}
    for b, members in enumerate(buckets):
        for i in members:
            owner[named_params[i][0]] = b
    return owner


def _median(values: Iterable[float]) -> float:
    return statistics.median(values)


def _untyped_storage(tensor: torch.Tensor) -> Any:
    """The storage a tensor and its views share: Tensor.untyped_storage() from PyTorch 2.0 on
    (where TypedStorage no longer wraps one), the typed storage's own before."""
    if hasattr(tensor, "untyped_storage"):
        return tensor.untyped_storage()
    return tensor.storage()._storage


def _storage_id(tensor: torch.Tensor) -> int:
    return _untyped_storage(tensor)._cdata


def saved_bytes(model: torch.nn.Module, run: Callable[[], Any]) -> int:
    """Bytes of the distinct storages autograd saves for backward while `run()` builds the
    graph, parameters excluded: the activation memory a training step holds after forward."""
    parameters = {_storage_id(p) for p in model.parameters()}
    storages: dict[int, int] = {}

    def pack(tensor: torch.Tensor) -> torch.Tensor:
        key = _storage_id(tensor)
        if key not in parameters:
            storages[key] = _untyped_storage(tensor).nbytes()
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        result = run()
    del result
    return sum(storages.values())


# aten operators whose FLOPs are matrix products (the profiler also counts aten::mul and
# aten::add, elementwise).
GEMM_OPERATORS = ("aten::conv", "aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::matmul")
LABEL = "dtperf_collect::"


def forward_flops(model: torch.nn.Module, run: Callable[[], Any]) -> dict[str, tuple[float, str]]:
    """FLOPs of one forward pass `run()`, per module that owns trainable parameters, as
    PyTorch's profiler counts them (`with_flops`: convolutions, matrix products, and
    elementwise multiplies and adds; 2 per multiply-add): {module name: (FLOPs, kind)},
    kind "gemm" where a convolution or matrix product counted, else "elementwise". An
    operator counts for the innermost such module whose forward it ran in (a module that
    calls its children's weights directly, as nn.MultiheadAttention does its out_proj,
    counts them)."""
    owners = [(n, m) for n, m in model.named_modules()
              if any(p.requires_grad for p in m.parameters(recurse=False))]
    open_labels: list[Any] = []

    def enter(name: str) -> Callable[..., None]:
        def hook(*_: Any) -> None:
            label = torch.autograd.profiler.record_function(LABEL + name)
            label.__enter__()
            open_labels.append(label)
        return hook

    def leave(*_: Any) -> None:
        open_labels.pop().__exit__(None, None, None)

    handles = []
    for n, m in owners:
        handles.append(m.register_forward_pre_hook(enter(n)))
        handles.append(m.register_forward_hook(leave))
    try:
        with torch.no_grad(), torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                                     with_flops=True) as prof:
            run()
    finally:
        for h in handles:
            h.remove()
    counted: dict[str, list[float]] = {}  # module -> [all FLOPs, GEMM FLOPs]
    for event in prof.events():
        if not event.flops:
            continue
        parent = event.cpu_parent
        while parent is not None and not parent.name.startswith(LABEL):
            parent = parent.cpu_parent
        if parent is None:
            continue  # outside every module with parameters (the loss, a functional call)
        totals = counted.setdefault(parent.name[len(LABEL):], [0.0, 0.0])
        totals[0] += event.flops
        if event.name.startswith(GEMM_OPERATORS):
            totals[1] += event.flops
    return {n: (total, "gemm" if gemm > 0.0 else "elementwise") for n, (total, gemm) in counted.items()}


def profile(model: torch.nn.Module, batch_fn: BatchFn, *, batch: int = 32, iters: int = 30, warmup: int = 5,
            device: str | torch.device = "cpu", optimizer: str = "sgd-momentum", lr: float = 1e-3,
            loss_fn: LossFn | None = None, name: str | None = None, sample_unit: str = "sample",
            bucket_cap_mb: float = 25.0) -> dict[str, Any]:
    """Measures `model` training on batches from `batch_fn(batch) -> (inputs, target)`.

    Returns the dtperf.model/1 document: layers in gradient-ready order with their measured
    backward time (the median over `iters` iterations of the wait since the previous
    gradient was ready), and a `measured` block with the single-device iteration, forward,
    backward and optimizer medians, the iteration p10/p90 and the bytes autograd keeps for
    backward per sample (one more forward pass, counted by saved_bytes), and per layer the
    forward FLOPs per sample PyTorch's profiler counts in another (forward_flops).
    """
    if iters < 3:
        raise ValueError("iters must be at least 3 (medians and quantiles need a few samples)")
    if batch <= 0:
        raise ValueError("batch must be positive")
    device = torch.device(device)
    model = model.to(device)
    model.train()
    criterion: LossFn = loss_fn or _default_loss
    named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    if not named:
        raise ValueError("the model has no trainable parameters")
    opt = _make_optimizer(optimizer, [p for _, p in named], lr)
    clock = _Clock(device)

    ready: dict[str, Any] = {}  # name -> timestamp of this iteration's gradient

    def hook_for(param_name: str) -> Callable[[torch.Tensor], torch.Tensor]:
        def hook(grad: torch.Tensor) -> torch.Tensor:
            ready[param_name] = clock.mark()
            return grad
        return hook

    handles = [p.register_hook(hook_for(n)) for n, p in named]
    samples: dict[str, list[float]] = {"iteration": [], "forward": [], "backward": [], "optimizer": []}
    offsets: dict[str, list[float]] = {n: [] for n, _ in named}
    try:
        for step in range(warmup + iters):
            inputs, target = batch_fn(batch)
            inputs = inputs if isinstance(inputs, (tuple, list)) else (inputs,)
            inputs = tuple(x.to(device) for x in inputs)
            target = target.to(device)
            ready.clear()
            clock.sync()
            t0 = clock.mark()
            opt.zero_grad(set_to_none=True)
            output = model(*inputs)
            loss = criterion(output, target)
            t_forward = clock.mark()
            loss.backward()
            t_backward = clock.mark()
            opt.step()
            t_end = clock.mark()
            clock.sync()
            if step < warmup:
                continue
            samples["iteration"].append(clock.elapsed_ms(t0, t_end))
            samples["forward"].append(clock.elapsed_ms(t0, t_forward))
            samples["backward"].append(clock.elapsed_ms(t_forward, t_backward))
            samples["optimizer"].append(clock.elapsed_ms(t_backward, t_end))
            for n, _ in named:
                if n in ready:
                    offsets[n].append(clock.elapsed_ms(t_forward, ready[n]))
    finally:
        for h in handles:
            h.remove()

    inputs, target = batch_fn(batch)
    inputs = inputs if isinstance(inputs, (tuple, list)) else (inputs,)
    inputs = tuple(x.to(device) for x in inputs)
    kept = saved_bytes(model, lambda: criterion(model(*inputs), target.to(device)))
    opt.zero_grad(set_to_none=True)
    # A module's FLOPs go to the parameter that carries its product (its weight, else its
    # first); its other parameters (a bias) count none.
    flops = forward_flops(model, lambda: model(*inputs))
    flops_of: dict[str, tuple[float, str]] = {}
    for module_name, (count, kind) in flops.items():
        module = model.get_submodule(module_name) if module_name else model
        own = [n for n, p in module.named_parameters(recurse=False) if p.requires_grad]
        carrier = "weight" if "weight" in own else own[0]
        flops_of[f"{module_name}.{carrier}" if module_name else carrier] = (count, kind)

    unused = [n for n, _ in named if not offsets[n]]
    if unused:
        raise ValueError(f"no gradient reached {', '.join(unused[:5])}: unused parameters cannot be timed")
    # Gradient-ready order: by median time since backward started.
    order = sorted(named, key=lambda item: _median(offsets[item[0]]))
    owner = ddp_buckets(named, bucket_cap_mb)
    layers: list[dict[str, Any]] = []
    previous = 0.0
    for n, p in order:
        at = _median(offsets[n])
        layer: dict[str, Any] = {
            "name": n,
            "params": p.numel(),
            "backward_us": round(max(0.0, at - previous) * 1e3, 3),
            "dtype": str(p.dtype).replace("torch.", ""),
        }
        if owner is not None:
            layer["ddp_bucket"] = owner[n]
        if n in flops_of:
            layer["forward_gflop_per_sample"] = float(f"{flops_of[n][0] / batch / 1e9:.9g}")
            layer["kind"] = flops_of[n][1]
        layers.append(layer)
        previous = max(previous, at)
    element_bytes = {p.element_size() for _, p in named}
    if len(element_bytes) != 1:
        raise ValueError(f"parameters of mixed element sizes {sorted(element_bytes)} bytes; dtperf takes one")
    iteration = samples["iteration"]
    return {
        "schema": SCHEMA,
        "name": name or type(model).__name__,
        "description": f"{type(model).__name__} measured by dtperf_collect on {device.type}",
        "citation": f"dtperf_collect, torch {torch.__version__}",
        "sample_unit": sample_unit,
        "batch_per_gpu": batch,
        "param_bytes": element_bytes.pop(),
        "optimizer": optimizer,
        "measured": {
            "single_gpu_iteration_ms": round(_median(iteration), 6),
            "batch_per_gpu": batch,
            "forward_ms": round(_median(samples["forward"]), 6),
            "backward_ms": round(_median(samples["backward"]), 6),
            "optimizer_ms": round(_median(samples["optimizer"]), 6),
            "iteration_p10_ms": round(quantile(iteration, 0.1), 6),
            "iteration_p90_ms": round(quantile(iteration, 0.9), 6),
            "iterations": iters,
            "saved_bytes_per_sample": round(kept / batch, 3),
            "device": str(device),
            "tool": f"dtperf_collect (torch {torch.__version__})",
        },
        "layers": layers,
    }


def write_model(document: dict[str, Any], path: str | os.PathLike[str]) -> None:
    """Writes the layer file whole or not at all (a temporary file renamed into place)."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, temporary = tempfile.mkstemp(prefix=".dtperf_collect.", dir=folder)
    try:
        with os.fdopen(fd, "w") as out:
            json.dump(document, out, indent=2)
            out.write("\n")
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.remove(temporary)
        raise
