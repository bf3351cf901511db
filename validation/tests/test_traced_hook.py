"""train.py's DDP communication hook for --trace passes DDP's own check of a hook (DDP
refuses one whose annotations are not its types). Skipped without PyTorch."""

import importlib.util
import unittest
from unittest import mock

HAVE_TORCH = importlib.util.find_spec("torch") is not None
if HAVE_TORCH:
    import torch

    import train


@unittest.skipUnless(HAVE_TORCH, "PyTorch is not installed")
class TracedHookTest(unittest.TestCase):
    def test_ddp_accepts_the_traced_hook(self):
        check = getattr(torch.nn.parallel.DistributedDataParallel, "_check_comm_hook", None)
        if check is None:
            self.skipTest("this PyTorch's DDP has no hook check")
        with mock.patch.object(train.dist, "get_world_size", lambda group: 2):
            hook = train.traced_average_hook(None, [])
        ddp = mock.Mock()
        ddp._log_and_throw.side_effect = lambda kind, message: self.fail(message)
        check(ddp, hook)
