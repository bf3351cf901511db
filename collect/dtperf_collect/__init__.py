"""dtperf_collect: measure a PyTorch model for dtperf.

Two things a prediction needs from a real framework:

* ``profile(model, batch_fn, ...)`` runs the model on one device (CPU or CUDA) and records,
  per parameter tensor, the time its gradient becomes ready in backward (autograd hooks), the
  forward time, the optimizer step time, bytes and dtype, and the DDP bucket PyTorch would
  assign it. It returns a ``dtperf.model/1`` layer file (a dict; ``write_model`` saves it).
* ``RunRecorder`` records a running (DDP or gossip) job's iteration times and appends them
  as one run to a ``dtperf.runs/1`` file (JSON lines) for ``dtperf fit --runs``.

Only PyTorch is needed (Debian's python3-torch is enough). The command line is
``python3 -m dtperf_collect --model my_module:build --batch 32 --iters 30 -o my-model.json``.
"""

from .profiler import profile, write_model
from .runs import RunRecorder

__all__ = ["profile", "write_model", "RunRecorder"]
