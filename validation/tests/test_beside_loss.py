"""The compute-beside-exchanges phase's loss per byte (train.loss_s_per_byte). Skipped
without PyTorch."""

import importlib.util
import unittest

HAVE_TORCH = importlib.util.find_spec("torch") is not None
if HAVE_TORCH:
    import train


@unittest.skipUnless(HAVE_TORCH, "PyTorch is not installed")
class BesideLossTest(unittest.TestCase):
    def test_the_loss_is_the_share_of_time_taken_per_byte_sent(self):
        # 60 ms alone, 75 ms beside: 1 - 60/75 = 20 % of 0.5 s taken while 4 MB left: 25 ns/B.
        self.assertAlmostEqual(train.loss_s_per_byte(0.060, 0.075, 0.5, 4e6) * 1e9, 25.0)

    def test_compute_no_slower_beside_loses_nothing(self):
        self.assertEqual(train.loss_s_per_byte(0.060, 0.060, 0.5, 4e6), 0.0)


if __name__ == "__main__":
    unittest.main()
