"""Which of a run's timings the harness scores: every run is timed three times (--repeats);
a timed window whose halves are over 5 % apart had not settled and is scored only where no
timing of the run settled; the run stands for its median scored timing, by error against
the range dtperf states, then by point error."""

import unittest

import harness


def timing(first_ms, second_ms):
    return {"iteration_halves_ms": [first_ms, second_ms]}


def predicted(error, range_error=None):
    """A timing as a predicted cell: its point error and its error against the stated range."""
    return {"error": error, "range_error": error if range_error is None else range_error}


class TimingsTest(unittest.TestCase):
    def test_halves_gap_is_over_the_longer_half(self):
        self.assertAlmostEqual(harness.halves_gap([90.5, 85.5]), 5.0 / 90.5)  # 5.5 %
        self.assertAlmostEqual(harness.halves_gap([76.9, 85.8]), 8.9 / 85.8)  # 10.4 %

    def test_the_settled_timings_are_scored(self):
        # 5.5 % apart (unsettled), 4.0 % (settled: 3.6 of 90.0), 1 % (settled).
        timings = [timing(90.5, 85.5), timing(90.0, 86.4), timing(88.0, 87.12)]
        self.assertEqual(harness.scored_timings(timings), [1, 2])
        self.assertEqual(harness.scored_timings([timing(100.0, 96.0)]), [0])  # 4 % apart

    def test_where_none_settles_all_are_scored(self):
        # 5.5 %, 10.4 %, 6.0 % apart.
        timings = [timing(90.5, 85.5), timing(76.9, 85.8), timing(80.0, 85.1)]
        self.assertEqual(harness.scored_timings(timings), [0, 1, 2])

    def test_the_median_timing_stands(self):
        # +1.3, +9.7 and -3.5 %: the median is the first timing's +1.3 %.
        self.assertEqual(harness.median_timing([predicted(0.013), predicted(0.097), predicted(-0.035)]), 0)
        # Two inside their stated ranges (range error 0) and one 2 % outside: in order
        # (0, +4 %), (0, +12 %), (+2 %, +2 %), so the median is the first timing, inside its
        # range though its point error is the largest.
        cells = [predicted(0.12, 0.0), predicted(0.04, 0.0), predicted(0.02)]
        self.assertEqual(harness.median_timing(cells), 0)
        # An even count takes the lower median: -3.5 % of (-3.5, +9.7).
        self.assertEqual(harness.median_timing([predicted(0.097), predicted(-0.035)]), 1)

    def test_the_standing_cell_keeps_every_timing(self):
        cells = [dict(predicted(0.30), measured_ms=50.0), dict(predicted(0.05), measured_ms=60.0),
                 dict(predicted(-0.02), measured_ms=62.0), dict(predicted(0.08), measured_ms=58.0)]
        # The first timing was unsettled: the median of the other three (+5, -2, +8 %) is +5 %.
        cell = harness.standing_cell(cells, [1, 2, 3])
        self.assertEqual((cell["measured_ms"], cell["error"], cell["standing_timing"]), (60.0, 0.05, 1))
        self.assertEqual(cell["timings"], cells)
        self.assertEqual(cell["scored_timings"], [1, 2, 3])
        self.assertEqual(harness.timings_note(cell), "  timings +30.0 unsettled / +5.0 / -2.0 / +8.0 %")
        self.assertEqual(harness.timings_note(harness.standing_cell(cells[:1], [0])), "")

    def test_steal_ticks_are_read_from_the_machine(self):
        steal, total = harness.cpu_steal_ticks()
        self.assertGreaterEqual(steal, 0)
        self.assertGreater(total, steal)


if __name__ == "__main__":
    unittest.main()
