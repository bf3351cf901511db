"""Recording a running job's iteration times as one run of a dtperf.runs/1 file."""

from __future__ import annotations

import json
import os
import statistics
import time
from collections.abc import Callable
from types import TracebackType
from typing import Any, Literal

from .stats import quantile

SCHEMA = "dtperf.runs/1"


class RunRecorder:
    """Times the iterations of a training loop and appends them as one run (JSON lines).

    with RunRecorder("runs.jsonl", label="ddp-2x4", scheme="all-reduce", nodes=2,
                     gpus_per_node=4, batch_per_gpu=32, warmup=5) as rec:
        for batch in loader:
            train_step(batch)
            rec.step()          # after the iteration's work is done (synchronize on CUDA)

    Any other dtperf.runs/1 key (bucket_cap_mib, algorithm, global_batch, ...) is passed as a
    keyword. Only one process should record (rank 0): the others pass `enabled=False`.
    The file gets its header line when it is new; each run is one line, written at close.
    """

    def __init__(self, path: str | os.PathLike[str], *, label: str, scheme: str, nodes: int, warmup: int = 5,
                 enabled: bool = True, clock: Callable[[], float] = time.perf_counter, source: str | None = None,
                 **config: Any) -> None:
        if nodes < 1:
            raise ValueError("nodes must be at least 1")
        self.path = path
        self.run: dict[str, Any] = {"label": label, "scheme": scheme, "nodes": nodes, **config}
        if source:
            self.run["source"] = source
        self.warmup = warmup
        self.enabled = enabled
        self.clock = clock
        self.times_ms: list[float] = []
        self._last: float | None = None
        self._steps = 0

    def __enter__(self) -> RunRecorder:
        self.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 traceback: TracebackType | None) -> Literal[False]:
        if kind is None:
            self.close()
        return False

    def start(self) -> None:
        self._last = self.clock()

    def step(self) -> None:
        now = self.clock()
        if self._last is None:
            self._last = now
            return
        self._steps += 1
        if self._steps > self.warmup:
            self.times_ms.append((now - self._last) * 1e3)
        self._last = now

    def summary(self) -> dict[str, float]:
        if len(self.times_ms) < 3:
            raise ValueError(f"only {len(self.times_ms)} timed iterations after {self.warmup} of warm-up; need 3")
        times = self.times_ms
        return {"median": round(statistics.median(times), 6), "p10": round(quantile(times, 0.1), 6),
                "p90": round(quantile(times, 0.9), 6)}

    def close(self) -> dict[str, Any] | None:
        if not self.enabled:
            return None
        record = dict(self.run)
        record["iteration_ms"] = self.summary()
        new = not os.path.exists(self.path) or os.path.getsize(self.path) == 0
        with open(self.path, "a") as out:
            if new:
                out.write(json.dumps({"schema": SCHEMA, "description": "recorded by dtperf_collect"}) + "\n")
            out.write(json.dumps(record) + "\n")
        return record
