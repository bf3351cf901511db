"""The compute-beside-exchanges phase's loss per byte (train.loss_s_per_byte): the compute-only
reference taken at the machine's speed during the round. Skipped without PyTorch."""

import importlib.util
import unittest

HAVE_TORCH = importlib.util.find_spec("torch") is not None
if HAVE_TORCH:
    import train


@unittest.skipUnless(HAVE_TORCH, "PyTorch is not installed")
class BesideLossTest(unittest.TestCase):
    def test_at_the_same_speed_the_loss_is_the_share_of_time_taken(self):
        # 60 ms alone, 75 ms beside: 1 - 60/75 = 20 % of 0.5 s taken while 4 MB left: 25 ns/B.
        self.assertAlmostEqual(train.loss_s_per_byte(0.060, 0.075, 1.0, 0.5, 4e6) * 1e9, 25.0)

    def test_a_machine_slower_in_the_round_is_not_read_as_contention(self):
        # Forwards took 1.1x their CPU time alone: compute alone would take 66 ms there,
        # so 75 ms beside loses 1 - 66/75 = 12 % (not 20 %): 0.12 x 0.5 s / 4 MB = 15 ns/B.
        self.assertAlmostEqual(train.loss_s_per_byte(0.060, 0.075, 1.1, 0.5, 4e6) * 1e9, 15.0)

    def test_a_machine_faster_in_the_round_shows_the_contention_it_hid(self):
        # 0.9x: 54 ms alone at that speed, 60 ms beside: 10 % of 0.5 s over 4 MB = 12.5 ns/B,
        # where the unscaled reference (60 ms against 60 ms) reads none.
        self.assertAlmostEqual(train.loss_s_per_byte(0.060, 0.060, 0.9, 0.5, 4e6) * 1e9, 12.5)
        self.assertAlmostEqual(train.loss_s_per_byte(0.060, 0.060, 1.0, 0.5, 4e6), 0.0)


if __name__ == "__main__":
    unittest.main()
