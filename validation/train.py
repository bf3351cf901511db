"""One rank of the validation harness's real training: PyTorch on the CPU, gloo between
ranks, All-Reduce (PyTorch DDP) or decentralized training with Decent-DP's semantics, which
are what dtperf models (include/dtperf/gossip.hpp):

  per bucket (gradient-ready order, a bucket closes once it holds >= the cap), in the hook
  that runs once the bucket's last gradient is accumulated, at iteration t:
    1. wait for the bucket's exchange launched at t-1;
    2. mix: the bucket's parameters become their group's average;
    3. the bucket-local optimizer step (with the gradient of the un-mixed parameters);
    4. launch the bucket's exchange on step t's groups: an asynchronous all-reduce (SUM) of
       the bucket's flattened parameters on a gloo group.

The groups of every step come from `dtperf topologies --schedule --json`, so the harness
runs exactly the schedule dtperf simulates. Five phases: first `--warmup` + `--compute-iters`
iterations with no communication at all (every rank computing at once, as in training;
untimed iterations before and after keep every rank computing until all have finished
theirs), then as many with the run's exchanges alone (the CPU time
gloo takes per byte sent, for the reader), then compute beside the run's exchanges (what the
transport takes from compute per byte sent, and how much compute varies beside it: the
figures dtperf is given), then `--train-warmup` (default `--warmup`) + `--iters` training
iterations (or whole multiples of `--iters`, to last `--min-timed-s`: timed_iterations
below), and last the compute-only phase again, on a fresh copy of the model: the compute
time dtperf is given is each rank's median over both, which bracket the training window.
Rank 0 writes every rank's figures (compute median and samples, iteration mean and
the means of the timed window's two halves, CPU times, loss per byte and the scatter of
compute beside the exchanges) to `--out` as JSON; `--trace` keeps every rank's iteration
starts and exchange launches and waits (DDP: each iteration's forward, backward and
optimizer step, and each bucket's all-reduce from launch to end).

The harness starts it with the tree's collector on PYTHONPATH (harness.python_env).
"""

import argparse
import datetime
import json
import math
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Optional, Tuple

import torch
import torch.distributed as dist

import models
from dtperf_collect.stats import quantile

# Per step of a topology's period, this rank's (process group, group size); the group None
# is the default (world) one.
Step = Tuple[Optional[dist.ProcessGroup], int]
# A traced event: (event, step, bucket, t0, t1), times on the machine's monotonic clock.
Event = Tuple[str, int, int, float, float]


def summary_ms(times_s: Sequence[float]) -> dict[str, float]:
    ms = [t * 1e3 for t in times_s]
    return {"median": statistics.median(ms), "p10": quantile(ms, 0.1), "p90": quantile(ms, 0.9)}


GLOO_DEFAULT_THREADS = 2  # collectives a gloo process group runs at once unless told otherwise
# The compute-beside-exchanges phase (compute_beside_exchanges): compute-only iterations
# before each round's exchanges, its reference (half the eight iterations its exchanges
# last), and the rounds counted at the least.
REFERENCE_ITERATIONS = 4
MIN_BESIDE_ROUNDS = 8


def in_order_group(members: Iterable[int], rank: int, threads: int) -> dist.ProcessGroup:
    """A gloo process group on `members` (global ranks) that runs at most `threads` of its
    collectives at once, built by a rank in it.

    gloo's default runs two of a group's collectives at once, each on its own thread; a
    NCCL communicator runs its collectives one after another on one stream, which
    `threads` = 1 gives: DDP's buckets in launch order on the world's group, and each
    gossip group's exchanges in launch order (the groups of different steps still run
    beside each other, as separate communicators do). Built from gloo's own options, which
    torch.distributed.new_group does not take; only the members build it (gloo's
    rendezvous is among them, through the default store)."""
    members = sorted(members)
    options = dist.ProcessGroupGloo._Options()
    options._threads = threads
    options._timeout = datetime.timedelta(minutes=30)
    options._devices = [dist.ProcessGroupGloo.create_device(interface=os.environ["GLOO_SOCKET_IFNAME"])]
    store = dist.PrefixStore("in-order-" + "-".join(map(str, members)), dist.distributed_c10d._get_default_store())
    return dist.ProcessGroupGloo(store, members.index(rank), len(members), options)


def world_group(world: int, rank: int, threads: int) -> Optional[dist.ProcessGroup]:
    """The group DDP and All-Reduce's exchanges run on: the default one (None) with gloo's
    default threads."""
    return None if threads == GLOO_DEFAULT_THREADS else in_order_group(range(world), rank, threads)


def step_groups(schedule: list[dict[str, Any]], rank: int, threads: int) -> list[Step]:
    """Per step of the period, this rank's (group, group size). With gloo's default threads
    every rank creates every group, in the same order (torch.distributed.new_group requires
    it); otherwise each rank builds only its own groups, in their order of first appearance
    in the schedule, which every member follows, so no two ranks wait on each other's
    rendezvous."""
    steps: list[Step] = []
    cache: dict[tuple[int, ...], dist.ProcessGroup] = {}
    for step in schedule:
        if step["mixing"] != "group_average" or len(step["rounds"]) != 1:
            raise SystemExit("the harness runs one-round group-average topologies only")
        mine: Optional[Step] = None
        for members in step["rounds"][0]:
            key = tuple(members)
            if key not in cache:
                if threads == GLOO_DEFAULT_THREADS:
                    cache[key] = dist.new_group(list(members))
                elif rank in members:
                    cache[key] = in_order_group(members, rank, threads)
            if rank in members:
                mine = (cache[key], len(members))
        if mine is None:
            raise SystemExit(f"rank {rank} is in no group of a step of the schedule")
        steps.append(mine)
    return steps


def buckets_in_ready_order(model: torch.nn.Module, cap_bytes: float) -> list[list[torch.Tensor]]:
    """Parameters in gradient-ready order (the reverse of definition order for the
    harness's sequential models), split where a bucket reaches the cap."""
    params = [p for p in model.parameters() if p.requires_grad][::-1]
    buckets: list[list[torch.Tensor]] = []
    current: list[torch.Tensor] = []
    size = 0
    for p in params:
        current.append(p)
        size += p.numel() * p.element_size()
        if size >= cap_bytes:
            buckets.append(current)
            current, size = [], 0
    if current:
        buckets.append(current)
    return buckets


class DecentDP:
    """Decent-DP's exchange per bucket, in the accumulate-grad hook of the bucket's last
    parameter (the hook fires once its gradient is in .grad)."""

    def __init__(self, model: torch.nn.Module, steps: list[Step], rank: int, cap_bytes: float, lr: float,
                 momentum: float) -> None:
        self.rank = rank
        self.buckets = buckets_in_ready_order(model, cap_bytes)
        self.lr, self.momentum = lr, momentum
        self.velocity = {id(p): torch.zeros_like(p) for b in self.buckets for p in b}
        self.steps = steps  # per step of the period: (group, group size), step_groups()
        # Per bucket, its exchange in flight: (work, flat buffer, group size).
        self.pending: list[Optional[tuple[Any, torch.Tensor, int]]] = [None] * len(self.buckets)
        self.wait_s = 0.0  # time spent waiting for exchanges, for the reader
        # With --trace: (event, step, bucket, t0, t1) per launch ("launch", t1 = t0) and
        # per wait for an exchange ("wait", from t0 to t1), on the machine's monotonic clock.
        self.events: Optional[list[Event]] = None
        self.step_index = 0
        self._hooks: list[Any] = []
        for b, params in enumerate(self.buckets):
            last = params[-1]
            accumulate = last.expand_as(last).grad_fn.next_functions[0][0]
            self._hooks.append(accumulate)
            accumulate.register_hook(self._hook_for(b))

    def _hook_for(self, b: int) -> Callable[..., None]:
        def hook(*_: Any) -> None:
            self.on_bucket_ready(b)
        return hook

    def on_bucket_ready(self, b: int) -> None:
        params = self.buckets[b]
        with torch.no_grad():
            pending = self.pending[b]
            if pending is not None:
                work, flat, size = pending
                t0 = time.perf_counter()
                work.wait()
                t1 = time.perf_counter()
                self.wait_s += t1 - t0
                if self.events is not None:
                    self.events.append(("wait", self.step_index, b, t0, t1))
                flat.div_(size)
                offset = 0
                for p in params:
                    n = p.numel()
                    p.copy_(flat[offset:offset + n].view_as(p))
                    offset += n
            for p in params:  # SGD with momentum, bucket-local
                v = self.velocity[id(p)]
                v.mul_(self.momentum).add_(p.grad)
                p.add_(v, alpha=-self.lr)
                p.grad = None
            group, size = self.steps[self.step_index]
            flat = torch.cat([p.detach().reshape(-1) for p in params])
            self.pending[b] = (dist.all_reduce(flat, group=group, async_op=True), flat, size)
            if self.events is not None and size > 1:
                t = time.perf_counter()
                self.events.append(("launch", self.step_index, b, t, t))

    def end_iteration(self) -> None:
        self.step_index = (self.step_index + 1) % len(self.steps)

    def drain(self) -> None:
        for pending in self.pending:
            if pending is not None:
                pending[0].wait()


def traced_average_hook(group: Optional[dist.ProcessGroup],
                        events: list[Event]) -> Callable[[Any, dist.GradBucket], torch.futures.Future]:
    """A DDP communication hook that does what DDP does by default (average each bucket: divide
    by the group's size, all-reduce on `group`) and records in `events` each bucket's
    ("allreduce", 0, bucket index, launch, completion) on the machine's monotonic clock. With
    --trace only: it runs in Python where DDP's own runs in C++."""
    size = dist.get_world_size(group)

    # DDP checks these two annotations at run time against its own types (this module does
    # not postpone the evaluation of annotations for that).
    def hook(_state: Any, bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:
        launched = time.perf_counter()
        future = dist.all_reduce(bucket.buffer().div_(size), group=group, async_op=True).get_future()

        def done(f: torch.futures.Future) -> torch.Tensor:
            events.append(("allreduce", 0, bucket.index(), launched, time.perf_counter()))
            return f.value()[0]
        return future.then(done)
    return hook


def compute_until_every_rank_is_here(step: Callable[[], None]) -> None:
    """Untimed iterations of `step` until every rank has reached this call too (an
    asynchronous 4-byte all-reduce completes once all have launched it): around the timed
    compute-only iterations, so that none of them runs beside fewer computing ranks than
    training has: a rank through its warmup first, or done with its timed iterations
    while others are not, would otherwise time iterations beside fewer ranks (up to 2 x
    faster with 4 ranks on 2 cores)."""
    arrived = dist.all_reduce(torch.zeros(1), async_op=True)
    while not arrived.is_completed():
        step()
    arrived.wait()


class ForwardCpu:
    """The CPU seconds this process's main thread spends in each forward pass, in the order
    they ran: the machine's speed as compute sees it at that moment. A forward pass is the
    same work in every phase and runs no exchange's bookkeeping (DDP copies and launches in
    backward, Decent-DP mixes in its backward hooks), and a thread's CPU clock does not run
    while the scheduler gives its core to another thread, so a forward that costs more CPU
    seconds in training than in the compute-only phases means the machine itself ran
    slower (a shared host: on the 2-core VM a fixed single-thread matrix product took 91 s
    in one minute and 108 s a few minutes later, the machine otherwise idle).

    Each forward's wall time is kept beside it (`wall_s`, same order), for the reader: where
    a forward's wall time grows more than its CPU time from one phase to another, its core
    was given to other threads meanwhile (the link emulator, the transport), which the CPU
    clock does not see."""

    def __init__(self) -> None:
        self.samples_s: list[float] = []
        self.wall_s: list[float] = []

    def forward(self, model: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor) -> torch.Tensor:
        w0, t0 = time.perf_counter(), time.thread_time()
        out = model(x)
        self.samples_s.append(time.thread_time() - t0)
        self.wall_s.append(time.perf_counter() - w0)
        return out


def step_alone(model: torch.nn.Module, batch_fn: Callable[[int], tuple[torch.Tensor, torch.Tensor]], batch: int,
               loss_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor], lr: float,
               momentum: float, clock: ForwardCpu) -> Callable[[], None]:
    """One training step of `model` with no exchange (its own SGD optimizer): forward,
    backward and the update on a fresh batch, its forward's CPU time kept in `clock`."""
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=momentum)

    def step() -> None:
        x, y = batch_fn(batch)
        opt.zero_grad(set_to_none=True)
        loss_fn(clock.forward(model, x), y).backward()
        opt.step()
    return step


def compute_only(step: Callable[[], None], clock: ForwardCpu,
                 args: argparse.Namespace) -> tuple[list[float], float, float, list[float], list[float]]:
    """A compute-only phase, every rank at once: `--warmup` untimed iterations, then
    `--compute-iters` timed ones between untimed iterations that keep every rank computing
    until all are here. Returns each timed iteration's seconds, this process's and the
    whole machine's CPU seconds per timed iteration, and each timed iteration's forward CPU
    and wall seconds (`clock`, which `step` records into)."""
    dist.barrier()
    for _ in range(args.warmup):
        step()
    compute_until_every_rank_is_here(step)
    times: list[float] = []
    first = len(clock.samples_s)
    cpu0, busy0 = time.process_time(), machine_busy_s()
    for _ in range(args.compute_iters):
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    cpu_s = (time.process_time() - cpu0) / args.compute_iters
    machine_s = (machine_busy_s() - busy0) / args.compute_iters
    forward_cpu_s, forward_wall_s = clock.samples_s[first:], clock.wall_s[first:]
    compute_until_every_rank_is_here(step)
    dist.barrier()
    return times, cpu_s, machine_s, forward_cpu_s, forward_wall_s


def gather_samples(samples: Sequence[float], world: int) -> list[list[float]]:
    """Every rank's samples (each rank as many), gathered to every rank in rank order."""
    mine = torch.tensor(samples, dtype=torch.float64)
    every = [torch.zeros_like(mine) for _ in range(world)]
    dist.all_gather(every, mine)
    return [t.tolist() for t in every]


def machine_busy_s() -> float:
    """CPU seconds the whole machine has been busy (all cores; /proc/stat), which counts
    what the ranks' processes do and what the kernel and the link emulator do for them."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def exchanges(model: torch.nn.Module, args: argparse.Namespace) -> tuple[list[torch.Tensor], list[Step]]:
    """The scheme's exchanges: a buffer per bucket and, per step of the period, this rank's
    (group, group size) (the world's for All-Reduce, which DDP then uses)."""
    cap = args.bucket_mib * 1024 * 1024
    buckets = [torch.zeros(sum(p.numel() for p in b)) for b in buckets_in_ready_order(model, cap)]
    if args.scheme == "all-reduce":
        return buckets, [(world_group(args.world, args.rank, args.gloo_threads), args.world)]
    with open(args.schedule) as f:
        return buckets, step_groups(json.load(f), args.rank, args.gloo_threads)


def bytes_sent(buckets: Sequence[torch.Tensor], size: int) -> float:
    """What this rank sends in one ring all-reduce of every bucket on `size` ranks (a ring
    all-reduce of S bytes on n ranks sends 2 (n - 1) / n S)."""
    return sum(2.0 * (size - 1) / size * b.numel() * b.element_size() for b in buckets)


def communication_only(buckets: Sequence[torch.Tensor], steps: Sequence[Step],
                       args: argparse.Namespace) -> tuple[float, float, float, float]:
    """`--warmup` + `--compute-iters` iterations of the scheme's exchanges alone: every
    bucket's all-reduce launched asynchronously (on the world for All-Reduce, on the step's
    group for a topology), then all awaited. Returns per iteration the process's CPU
    seconds, the whole machine's busy CPU seconds, the bytes this rank sends and the wall
    seconds."""
    sent = 0.0
    cpu0, busy0, wall0 = time.process_time(), machine_busy_s(), time.perf_counter()
    for i in range(args.warmup + args.compute_iters):
        if i == args.warmup:
            dist.barrier()  # every rank measures the same stretch of time
            cpu0, busy0, wall0, sent = time.process_time(), machine_busy_s(), time.perf_counter(), 0.0
        group, size = steps[i % len(steps)]
        works = [dist.all_reduce(b, group=group, async_op=True) for b in buckets]
        for w in works:
            w.wait()
        sent += bytes_sent(buckets, size)
    dist.barrier()
    iters = args.compute_iters
    return ((time.process_time() - cpu0) / iters, (machine_busy_s() - busy0) / iters, sent / iters,
            (time.perf_counter() - wall0) / iters)


def exchanges_alone_s(buckets: Sequence[torch.Tensor], group: Optional[dist.ProcessGroup], repeats: int) -> float:
    """Seconds until this rank's last completion of every bucket's all-reduce on `group`,
    launched `repeats` times at once after a barrier, with no compute beside them."""
    dist.barrier()
    t0 = time.perf_counter()
    for w in [dist.all_reduce(b, group=group, async_op=True) for _ in range(repeats) for b in buckets]:
        w.wait()
    return time.perf_counter() - t0


def loss_s_per_byte(alone_s: float, beside_s: float, duration_s: float, sent_bytes: float) -> float:
    """Compute seconds lost to the transport per byte sent, from a round of compute beside
    exchanges: iterations of `beside_s` on average where the same compute alone took
    `alone_s`, so the transport took 1 - alone_s / beside_s of every second, for
    `duration_s`, while `sent_bytes` left."""
    return (1.0 - alone_s / beside_s) * duration_s / sent_bytes


def compute_beside_exchanges(compute_step: Callable[[], None], buckets: Sequence[torch.Tensor], steps: Sequence[Step],
                             alone_s: float, clock: ForwardCpu, forward_alone_s: float, args: argparse.Namespace
                             ) -> tuple[list[float], list[float], list[list[float]], list[float]]:
    """What compute loses per byte this rank sends while the exchanges run beside it: the
    figure dtperf's host contention charges (compute loses the CPU time per byte x the
    bytes sent while they overlap), measured on the machine as training will load it
    rather than derived from CPU accounting (which misses what the transport's threads,
    interrupts and cache traffic cost a computing core beyond their own CPU time).

    Per round (one step of the period each, every rank at once): REFERENCE_ITERATIONS
    compute-only iterations on every rank, the round's reference; then every bucket's
    all-reduce is launched `repeats` times on the step's group, and the rank computes
    iteration after iteration until all have completed. Iterations that end before the last
    completion ran wholly beside the exchanges: their mean against the reference's mean
    gives the round's cost per byte (loss_s_per_byte). The reference is the round's own,
    seconds before its exchanges: the host's speed drifts by more than the transport costs
    (on the 2-core VM six runs of 2 x 1 at 1 Gbit/s within one hour read 57-78 ms of
    compute, and against one reference for the whole phase one run's rounds read -2.3 to
    6.2 ns/B), while a reference within the round moves with the host and not with the
    transport, which is not running then. (The forward pass's CPU clock is no such
    reference: beside these exchanges it runs 0.99-1.43 x its time alone on one rank of
    2 x 1 and 0.85-1.10 x on the other, the transport's doing.) `repeats` makes a round's
    exchanges last about eight compute iterations on the slowest rank. Returns the loss of
    every round in which this rank sent, in seconds per byte (empty if it never sent; the
    harness takes their median), how the beside iterations scatter: each over its round's
    mean (the compute factors the harness gives dtperf), and the other side of the
    contention: per round in which this rank sent, [bytes sent, the round's exchanges alone
    (s), the same beside compute (s)], each until this rank's last completion; the alone
    time measured once per step, the same exchanges launched with no compute (the harness
    fits from them the share of its CPU time an exchange waits for, contention.hpp), and per
    such round the median forward CPU time of its beside iterations over `forward_alone_s`,
    for the reader. The first pass over the period warms up; then passes until at least
    MIN_BESIDE_ROUNDS rounds in which ranks send, and at least three passes, are counted:
    a round's figure scatters by about 2x (2.6-7.0 ns/B over eight rounds of one rank), and
    the median of three such rounds, all this phase once counted on a one-step period,
    scatters nearly as widely."""
    sending_steps = max(1, sum(1 for _, size in steps if size > 1))  # AER on 2 ranks: every other
    passes = torch.tensor([1 + max(3, math.ceil(MIN_BESIDE_ROUNDS / sending_steps))], dtype=torch.int64)
    dist.all_reduce(passes, op=dist.ReduceOp.MAX)  # the same rounds on every rank
    rounds = int(passes.item()) * len(steps)
    factors: list[float] = []  # each wholly-beside iteration over its round's mean
    alone_ms = torch.tensor([alone_s * 1e3], dtype=torch.float64)
    dist.all_reduce(alone_ms, op=dist.ReduceOp.MAX)
    costs: list[float] = []
    forward_ratios: list[float] = []  # per round that sent: forward CPU time beside over alone
    repeats_per_step: dict[int, int] = {}
    batch_alone_s: dict[int, float] = {}
    exchange_rounds: list[list[float]] = []
    for r in range(rounds):
        group, size = steps[r % len(steps)]
        if r < len(steps):
            # How long this step's exchanges take alone decides its repeats (the same on
            # every rank), once per step.
            once_ms = torch.tensor([exchanges_alone_s(buckets, group, 1) * 1e3], dtype=torch.float64)
            dist.all_reduce(once_ms, op=dist.ReduceOp.MAX)
            repeats_per_step[r] = max(1, math.ceil(8 * alone_ms.item() / max(once_ms.item(), 1e-3)))
            batch_alone_s[r] = exchanges_alone_s(buckets, group, repeats_per_step[r])
        repeats = repeats_per_step[r % len(steps)]
        dist.barrier()
        reference: list[float] = []
        for _ in range(REFERENCE_ITERATIONS):
            start = time.perf_counter()
            compute_step()
            reference.append(time.perf_counter() - start)
        compute_until_every_rank_is_here(compute_step)  # every rank computes through its reference
        dist.barrier()
        done: list[float] = []
        t0 = time.perf_counter()
        works = [dist.all_reduce(b, group=group, async_op=True) for _ in range(repeats) for b in buckets]
        for w in works:  # gloo may run several of a group's collectives at once: any may end last
            w.get_future().add_done_callback(lambda _: done.append(time.perf_counter()))
        beside: list[tuple[float, float]] = []
        # A rank alone at this step computes about as long as the others' round lasts, so
        # that as many ranks compute as in training.
        alone_rounds = 8 if size == 1 else 0
        forwards: list[float] = []  # each beside iteration's forward CPU seconds
        while not all(w.is_completed() for w in works) or len(beside) < alone_rounds:
            start = time.perf_counter()
            compute_step()
            beside.append((start, time.perf_counter()))
            forwards.append(clock.samples_s[-1])
        for w in works:
            w.wait()
        end = max(done) if len(done) == len(works) else time.perf_counter()
        whole = [b - a for a, b in beside if b <= end]
        whole_forwards = [f for (_, b), f in zip(beside, forwards) if b <= end]
        sent = repeats * bytes_sent(buckets, size)
        if whole and r >= len(steps):  # the first pass over the period warms up
            mean_s = statistics.mean(whole)
            factors.extend(x / mean_s for x in whole)
            if sent > 0:
                if forward_alone_s > 0.0:
                    forward_ratios.append(statistics.median(whole_forwards) / forward_alone_s)
                costs.append(loss_s_per_byte(statistics.mean(reference), mean_s, end - t0, sent))
        if r >= len(steps) and sent > 0:
            exchange_rounds.append([sent, batch_alone_s[r % len(steps)], end - t0])
    dist.barrier()
    return costs, factors, exchange_rounds, forward_ratios


def timed_iterations(estimate_s: float, args: argparse.Namespace) -> int:
    """How many training iterations to time: `--iters`, or more, in whole multiples of it,
    until the window lasts `--min-timed-s` at `estimate_s` per iteration (the compute-only
    median plus the exchanges alone: no overlap, so never shorter than training's), the
    same on every rank (the largest estimate). A short window is at the mercy of one slow
    stretch of a shared machine: 24 of DDP's 58 ms iterations last 1.4 s, and one such run
    read 62 ms where its repeats read 57.5-58.3. Decided before training (its times do not
    enter), with a collective that none of training's is queued behind."""
    longest = torch.tensor([estimate_s], dtype=torch.float64)
    dist.all_reduce(longest, op=dist.ReduceOp.MAX)
    wanted = args.min_timed_s / max(longest.item(), 1e-6)
    return args.iters * max(1, math.ceil(wanted / args.iters))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rank", type=int, required=True)
    parser.add_argument("--world", type=int, required=True)
    parser.add_argument("--master", required=True, help="ADDRESS:PORT of rank 0")
    parser.add_argument("--interface", default="eth0")
    parser.add_argument("--scheme", required=True, help="all-reduce or a topology")
    parser.add_argument("--schedule", help="JSON file: the topology's steps (dtperf topologies --schedule)")
    parser.add_argument("--model", default="mlp")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--bucket-mib", type=float, default=1.0)
    parser.add_argument("--compute-iters", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--train-warmup", type=int, help="untimed training iterations (default: --warmup)")
    parser.add_argument("--iters", type=int, default=24)  # whole periods of 2, 3 and 4 steps
    parser.add_argument("--min-timed-s", type=float, default=0.0,
                        help="time more iterations (whole multiples of --iters) until the window lasts this long")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--gloo-threads", type=int, default=GLOO_DEFAULT_THREADS,
                        help="collectives each process group runs at once (1: in launch order, as on a NCCL stream)")
    parser.add_argument("--out")
    parser.add_argument("--trace", help="write PREFIX-rankN.json: every timed iteration's start and, for "
                        "decentralized training, every exchange's launch and wait; for DDP every forward, "
                        "backward and optimizer step and every bucket's all-reduce")
    args = parser.parse_args()

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.rank)
    os.environ["GLOO_SOCKET_IFNAME"] = args.interface
    dist.init_process_group("gloo", init_method=f"tcp://{args.master}", rank=args.rank, world_size=args.world)
    model, batch_fn = models.build(args.model)
    loss_fn = torch.nn.functional.mse_loss
    lr, momentum = 1e-3, 0.9

    # Phase 1: compute only, every rank at once.
    clock = ForwardCpu()
    compute_step = step_alone(model, batch_fn, args.batch, loss_fn, lr, momentum, clock)
    compute, compute_cpu_s, compute_machine_s, forward_cpu_before, forward_wall_before = compute_only(
        compute_step, clock, args)

    # Phase 2: communication only, the run's own collectives without compute: what the
    # gloo transport costs the host's CPU per byte sent (its threads, copies, sums and
    # waiting), measured before training so that the prediction stays blind.
    buckets, steps = exchanges(model, args)
    comm_cpu_s, comm_machine_cpu_s, comm_bytes, comm_wall_s = communication_only(buckets, steps, args)
    dist.barrier()
    # Phase 2b: compute beside those exchanges: what the transport takes from compute per
    # byte sent, as dtperf charges it, and how compute scatters beside them.
    beside_costs, beside_factors, exchange_rounds, beside_forward_ratios = compute_beside_exchanges(
        compute_step, buckets, steps, statistics.median(compute), clock, statistics.median(forward_cpu_before), args)

    # Phase 3: training, timed over at least --iters iterations and --min-timed-s seconds.
    iters = timed_iterations(statistics.median(compute) + comm_wall_s, args)
    gossip: Optional[DecentDP] = None
    ddp_events: list[Event] = []
    if args.scheme == "all-reduce":
        net = torch.nn.parallel.DistributedDataParallel(model, bucket_cap_mb=args.bucket_mib,
                                                        process_group=steps[0][0])
        opt = torch.optim.SGD(net.parameters(), lr=lr, momentum=momentum)
        if args.trace:
            net.register_comm_hook(None, traced_average_hook(steps[0][0], ddp_events))

        def step(x: torch.Tensor, y: torch.Tensor) -> None:
            t0 = time.perf_counter()
            opt.zero_grad(set_to_none=True)
            out = clock.forward(net, x)
            t1 = time.perf_counter()
            loss_fn(out, y).backward()
            t2 = time.perf_counter()
            opt.step()
            if args.trace:
                ddp_events.extend([("forward", 0, -1, t0, t1), ("backward", 0, -1, t1, t2),
                                   ("optimizer", 0, -1, t2, time.perf_counter())])
    else:
        decent = DecentDP(model, steps, args.rank, args.bucket_mib * 1024 * 1024, lr, momentum)
        gossip = decent

        def step(x: torch.Tensor, y: torch.Tensor) -> None:
            loss_fn(clock.forward(model, x), y).backward()
            decent.end_iteration()
    times: list[float] = []
    starts: list[float] = []  # the timed iterations' starts, for --trace
    cpu0, busy0 = time.process_time(), machine_busy_s()
    forward_first = len(clock.samples_s)
    warmup = args.warmup if args.train_warmup is None else args.train_warmup
    for i in range(warmup + iters):
        x, y = batch_fn(args.batch)
        t0 = time.perf_counter()
        step(x, y)
        if i >= warmup:
            times.append(time.perf_counter() - t0)
            starts.append(t0)
        if i + 1 == warmup:
            cpu0, busy0 = time.process_time(), machine_busy_s()
            forward_first = len(clock.samples_s)
            if gossip:
                gossip.wait_s = 0.0
                gossip.events = [] if args.trace else None
            else:
                ddp_events.clear()
    train_cpu_s = (time.process_time() - cpu0) / iters
    forward_cpu_train, forward_wall_train = clock.samples_s[forward_first:], clock.wall_s[forward_first:]
    train_machine_s = (machine_busy_s() - busy0) / iters
    wait_s = gossip.wait_s / iters if gossip else 0.0
    if gossip:
        gossip.drain()
    if args.trace:
        with open(f"{args.trace}-rank{args.rank}.json", "w") as f:
            json.dump({"rank": args.rank, "scheme": args.scheme, "iteration_starts_s": starts,
                       "iteration_s": times, "steps_per_period": len(gossip.steps) if gossip else 1,
                       "events": [dict(zip(("event", "step", "bucket", "t0_s", "t1_s"), e))
                                  for e in ((gossip.events or []) if gossip else ddp_events)]}, f)
    dist.barrier()
    # Phase 4: compute only again, on a fresh copy of the model (the trained one carries
    # the run's hooks, which would exchange). With phase 1 it brackets the training window:
    # the compute dtperf is given is the machine's speed on either side of it, not that of
    # the half second before it alone (on the 2-core VM one rank has read 49 ms and the
    # other 75 ms in the same phase, and a cell's phases 62 ms beside training at 59 ms).
    fresh, _ = models.build(args.model)
    compute_after, _, _, forward_cpu_after, forward_wall_after = compute_only(
        step_alone(fresh, batch_fn, args.batch, loss_fn, lr, momentum, clock), clock, args)
    # Every rank's iteration mean and CPU figures, gathered by name. The iteration is a mean:
    # a topology's period alternates fast and slow steps (one-peer-exp waits long after a
    # step across nodes, little after one inside), and a median of such a mix is neither.
    half = len(times) // 2
    mine = {"iteration_s": statistics.mean(times), "first_half_s": statistics.mean(times[:half]),
            "second_half_s": statistics.mean(times[half:]), "compute_cpu_s": compute_cpu_s, "train_cpu_s": train_cpu_s,
            "comm_cpu_s": comm_cpu_s, "comm_bytes": comm_bytes, "comm_machine_cpu_s": comm_machine_cpu_s,
            "compute_machine_s": compute_machine_s, "train_machine_s": train_machine_s, "wait_s": wait_s,
            "beside_s_per_byte": statistics.median(beside_costs) if beside_costs else math.nan,
            "beside_forward_ratio": statistics.median(beside_forward_ratios) if beside_forward_ratios else math.nan,
            "forward_cpu_alone_s": statistics.median(forward_cpu_before + forward_cpu_after),
            "forward_cpu_train_s": statistics.median(forward_cpu_train),
            "forward_wall_alone_s": statistics.median(forward_wall_before + forward_wall_after),
            "forward_wall_train_s": statistics.median(forward_wall_train)}
    gathered = [torch.zeros(len(mine), dtype=torch.float64) for _ in range(args.world)]
    dist.all_gather(gathered, torch.tensor(list(mine.values()), dtype=torch.float64))
    everyone = [dict(zip(mine, t.tolist())) for t in gathered]
    samples_per_rank = gather_samples(compute, args.world)
    after_per_rank = gather_samples(compute_after, args.world)
    every_beside = [None] * args.world
    dist.all_gather_object(every_beside, beside_factors)
    every_exchange_round = [None] * args.world
    dist.all_gather_object(every_exchange_round, exchange_rounds)
    every_beside_cost: list[list[float]] = [[] for _ in range(args.world)]
    dist.all_gather_object(every_beside_cost, beside_costs)
    if args.rank == 0 and args.out:
        first = everyone[0]  # the machine-wide figures: rank 0's window (every rank shares the machine)
        result = {
            "scheme": args.scheme,
            "world": args.world,
            "compute_ms": summary_ms(samples_per_rank[0]),
            "iteration_ms": summary_ms(times),
            "timed_iterations": iters,
            # Each rank's median over both compute-only phases, before and after training.
            "compute_ms_per_rank": [statistics.median(k + a) * 1e3 for k, a in zip(samples_per_rank, after_per_rank)],
            # Every timed compute-only iteration of every rank, before training and after:
            # how much it varies alone; and every iteration wholly beside the exchanges over
            # its round's mean: how much it varies as training loads the machine.
            "compute_samples_ms_per_rank": [[x * 1e3 for x in k] for k in samples_per_rank],
            "compute_after_samples_ms_per_rank": [[x * 1e3 for x in k] for k in after_per_rank],
            "beside_factors_per_rank": every_beside,
            # The exchanges of that phase against the same alone: [bytes sent, alone s,
            # beside compute s] per round in which the rank sent.
            "exchange_rounds_per_rank": every_exchange_round,
            "iteration_ms_per_rank": [r["iteration_s"] * 1e3 for r in everyone],  # means
            # The means over ranks of the timed window's first and second halves: apart, the
            # run had not settled (decentralized training's ranks drift in phase for a while).
            "iteration_halves_ms": [statistics.mean(r[k] for r in everyone) * 1e3
                                    for k in ("first_half_s", "second_half_s")],
            # CPU time of the whole process (every thread) per iteration, for the reader:
            # what communication adds on the host beside compute.
            "compute_cpu_ms_per_rank": [r["compute_cpu_s"] * 1e3 for r in everyone],
            "train_cpu_ms_per_rank": [r["train_cpu_s"] * 1e3 for r in everyone],
            # The communication-only phase: CPU time and bytes sent per iteration.
            "comm_cpu_ms_per_rank": [r["comm_cpu_s"] * 1e3 for r in everyone],
            "comm_bytes_per_rank": [r["comm_bytes"] for r in everyone],
            "comm_machine_cpu_ms": first["comm_machine_cpu_s"] * 1e3,  # the whole machine, all ranks
            # The compute-beside-exchanges phase: compute time lost per byte sent (null for a
            # rank that never sent).
            "beside_ns_per_byte_per_rank": [None if math.isnan(r["beside_s_per_byte"]) else r["beside_s_per_byte"] * 1e9
                                            for r in everyone],
            # ... of which it is the median: every round's, in order (how much one round's
            # figure scatters, and so how well the median of so many pins it down).
            "beside_ns_per_byte_rounds_per_rank": [[c * 1e9 for c in k] for k in every_beside_cost],
            # ... and, for the reader, a forward pass's CPU time there over the same alone,
            # the median over its rounds (null for a rank that never sent).
            "beside_forward_cpu_ratio_per_rank": [None if math.isnan(r["beside_forward_ratio"])
                                                  else r["beside_forward_ratio"] for r in everyone],
            # The whole machine's busy CPU per iteration of the compute-only phase and of
            # training, for the reader.
            "compute_machine_cpu_ms": first["compute_machine_s"] * 1e3,
            "train_machine_cpu_ms": first["train_machine_s"] * 1e3,
            # Decentralized training: the time a rank waited for exchanges per iteration
            # (its exposed communication; 0 for All-Reduce, whose waits are inside DDP).
            "train_wait_ms_per_rank": [r["wait_s"] * 1e3 for r in everyone],
            # Each rank's median forward CPU time (its main thread's, ForwardCpu) over both
            # compute-only phases and over the timed window: their ratio is how much slower
            # the machine ran compute during training than on either side of it.
            "forward_cpu_ms_per_rank": [{"compute_only": r["forward_cpu_alone_s"] * 1e3,
                                         "train": r["forward_cpu_train_s"] * 1e3} for r in everyone],
            # The same forwards' median wall times, for the reader (ForwardCpu.wall_s).
            "forward_wall_ms_per_rank": [{"compute_only": r["forward_wall_alone_s"] * 1e3,
                                          "train": r["forward_wall_train_s"] * 1e3} for r in everyone],
        }
        with open(args.out, "w") as f:
            json.dump(result, f, indent=2)
    dist.barrier()
    # gloo's teardown can spin forever at interpreter exit; everything is written.
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
