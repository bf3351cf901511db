"""train.py's timed window: whole multiples of --iters until it lasts --min-timed-s at the
largest estimate of any rank (torch.distributed's all-reduce replaced by one that makes
another rank's estimate the maximum). Skipped without PyTorch."""

import argparse
import importlib.util
import unittest
from unittest import mock

HAVE_TORCH = importlib.util.find_spec("torch") is not None
if HAVE_TORCH:
    import train


@unittest.skipUnless(HAVE_TORCH, "PyTorch is not installed")
class TimedIterationsTest(unittest.TestCase):
    def iterations(self, mine_s, others_s, iters, min_timed_s):
        def all_reduce(tensor, op=None):
            self.assertEqual(op, train.dist.ReduceOp.MAX)
            tensor.fill_(max(tensor.item(), others_s))

        args = argparse.Namespace(iters=iters, min_timed_s=min_timed_s)
        with mock.patch.object(train.dist, "all_reduce", all_reduce):
            return train.timed_iterations(mine_s, args)

    def test_a_long_enough_window_keeps_iters(self):
        # 24 x 0.340 s = 8.2 s >= 8 s.
        self.assertEqual(self.iterations(0.340, 0.300, iters=24, min_timed_s=8.0), 24)

    def test_a_short_window_grows_in_whole_multiples_at_the_slowest_estimate(self):
        # This rank says 0.040 s, another 0.066 s: 8 / 0.066 = 121.2 iterations -> 6 x 24 = 144
        # (at this rank's own estimate it would have been 200 -> 9 x 24 = 216).
        self.assertEqual(self.iterations(0.040, 0.066, iters=24, min_timed_s=8.0), 144)
        # Decentralized: 48 at a time (whole periods), 8 / 0.075 = 106.7 -> 3 x 48 = 144.
        self.assertEqual(self.iterations(0.075, 0.0, iters=48, min_timed_s=8.0), 144)

    def test_no_minimum_keeps_iters(self):
        self.assertEqual(self.iterations(0.010, 0.010, iters=24, min_timed_s=0.0), 24)


if __name__ == "__main__":
    unittest.main()
