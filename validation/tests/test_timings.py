"""Which of a run's timings the harness scores (harness.standing_timing): a timed window whose
halves are over 5 % apart had not settled and is timed again, up to three timings; the first
settled one stands, else the one whose halves are closest."""

import unittest

import harness


def timing(first_ms, second_ms):
    return {"iteration_halves_ms": [first_ms, second_ms]}


class TimingsTest(unittest.TestCase):
    def test_halves_gap_is_over_the_longer_half(self):
        self.assertAlmostEqual(harness.halves_gap([90.5, 85.5]), 5.0 / 90.5)  # 5.5 %
        self.assertAlmostEqual(harness.halves_gap([76.9, 85.8]), 8.9 / 85.8)  # 10.4 %

    def test_the_first_settled_timing_stands(self):
        # 5.5 % apart (unsettled), 4.0 % (settled: 3.6 of 90.0), 1 % (settled, but later).
        timings = [timing(90.5, 85.5), timing(90.0, 86.4), timing(88.0, 87.12)]
        self.assertEqual(harness.standing_timing(timings), 1)
        self.assertEqual(harness.standing_timing(timings[:1] + timings[2:]), 1)

    def test_where_none_settles_the_closest_halves_stand(self):
        # 5.5 %, 10.4 %, 6.0 % apart: the first is the most nearly settled.
        timings = [timing(90.5, 85.5), timing(76.9, 85.8), timing(80.0, 85.1)]
        self.assertEqual(harness.standing_timing(timings), 0)

    def test_a_settled_first_timing_is_the_only_one(self):
        self.assertEqual(harness.standing_timing([timing(100.0, 96.0)]), 0)  # 4 % apart

    def test_steal_ticks_are_read_from_the_machine(self):
        steal, total = harness.cpu_steal_ticks()
        self.assertGreaterEqual(steal, 0)
        self.assertGreater(total, steal)


if __name__ == "__main__":
    unittest.main()
