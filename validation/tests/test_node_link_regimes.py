"""node_link_regimes.py: the three ways of serving a shared node link, on a case small enough
to follow by hand, and on the harness cell it was written for."""

import unittest

import node_link_regimes as regimes


class NodeLinkRegimesTest(unittest.TestCase):
    def test_one_bucket_by_hand(self):
        # Forward and backward 10 ms each, one bucket 100 ms alone on the link, nothing else.
        # In phase: both crossing pairs launch at L and end at L + 200 (half the link each);
        # the next (intra-node) iteration waits for them, and the next crossing launch comes
        # 20 ms of compute later: 220 ms per two iterations.
        # First-come: pair (0, 2) holds the link L..L + 100, pair (1, 3) L + 100..L + 200. Rank 1
        # then launches its intra-node exchange with rank 0 at L + 200; rank 0, done at
        # L + 100, reaches its next crossing hook at L + 120, waits for that exchange, and
        # launches at L + 200, when the link frees: the link never idles, 100 ms per iteration.
        args = (10.0, [10.0], [100.0], 0.0, 0.0)
        self.assertAlmostEqual(regimes.mean_iteration_ms("in-phase", *args), 110.0, places=9)
        self.assertAlmostEqual(regimes.mean_iteration_ms("first-come", *args), 100.0, places=9)
        # One bucket: bucket order and arrival order are the same order.
        self.assertAlmostEqual(regimes.mean_iteration_ms("bucket-order", *args), 100.0, places=9)

    def test_the_harness_cell_needs_arrival_order(self):
        # The 2x2 cell at 100 Mbit/s (the defaults): measured 307.5-311.9 ms, link busy 306.6.
        args = (51.8, [23.6, 20.8, 20.3, 4.4], [95.0, 84.5, 84.5, 42.6], 0.57, 0.3)
        first_come = regimes.mean_iteration_ms("first-come", *args)
        self.assertAlmostEqual(first_come, 306.6, delta=0.05)
        self.assertGreater(regimes.mean_iteration_ms("bucket-order", *args), 1.05 * first_come)
        self.assertGreater(regimes.mean_iteration_ms("in-phase", *args), 1.10 * first_come)


if __name__ == "__main__":
    unittest.main()
