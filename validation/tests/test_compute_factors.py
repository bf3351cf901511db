"""The compute factors the harness gives dtperf (--iteration-times): the iterations that ran
beside the run's exchanges, each over its round's mean (train.py), where every rank has
enough of them; else every compute-only iteration over its rank's mean."""

import statistics
import unittest

import harness

# Two ranks' compute-only iterations (ms): rank 0 mean 50, rank 1 mean 100.
ALONE_MS = [[45.0, 55.0], [90.0, 110.0]]


class ComputeFactorsTest(unittest.TestCase):
    def test_the_beside_phase_gives_the_factors_when_every_rank_has_enough(self):
        beside = [[0.8, 1.2, 1.0, 0.9, 1.1], [1.3, 0.7, 1.0, 1.0, 1.0]]
        result = {"compute_samples_ms_per_rank": ALONE_MS, "beside_factors_per_rank": beside}
        factors = harness.compute_factors(result)
        self.assertEqual(factors, beside[0] + beside[1])
        # Their spread, not the compute-only phase's (0.1 on either rank): squared deviations
        # from 1, .04 .04 0 .01 .01 .09 .09 0 0 0, sum 0.28, over ten: sqrt(0.028) = 0.167.
        self.assertAlmostEqual(statistics.pstdev(factors), 0.028 ** 0.5)

    def test_the_compute_only_phase_where_a_rank_has_too_few_beside(self):
        # Rank 1 has 4 < MIN_BESIDE_SAMPLES = 5: 45/50, 55/50, 90/100, 110/100.
        beside = [[0.8, 1.2, 1.0, 0.9, 1.1], [1.3, 0.7, 1.0, 1.0]]
        result = {"compute_samples_ms_per_rank": ALONE_MS, "beside_factors_per_rank": beside}
        self.assertEqual(harness.MIN_BESIDE_SAMPLES, 5)
        self.assertEqual([round(x, 9) for x in harness.compute_factors(result)], [0.9, 1.1, 0.9, 1.1])

    def test_a_report_without_the_beside_phase_keeps_the_compute_only_factors(self):
        self.assertEqual([round(x, 9) for x in harness.compute_factors({"compute_samples_ms_per_rank": ALONE_MS})],
                         [0.9, 1.1, 0.9, 1.1])
        result = {"compute_samples_ms_per_rank": ALONE_MS, "beside_factors_per_rank": None}
        self.assertEqual(len(harness.compute_factors(result)), 4)


if __name__ == "__main__":
    unittest.main()
