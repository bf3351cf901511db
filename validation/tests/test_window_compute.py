"""The compute a run's timed window had (harness.window_compute_ms): each rank's compute-only
time scaled by how much more CPU time its forward passes took in training than alone."""

import unittest

import harness


def run(compute_ms_per_rank, forward_cpu_ms_per_rank):
    return {"compute_ms_per_rank": compute_ms_per_rank,
            "forward_cpu_ms_per_rank": [{"compute_only": alone, "train": train}
                                        for alone, train in forward_cpu_ms_per_rank]}


def window_ms(result):
    ms = harness.window_compute_ms(result)
    assert ms is not None
    return ms


class WindowComputeTest(unittest.TestCase):
    def test_each_rank_is_scaled_by_its_own_forward_clock(self):
        # Rank 0: 50 ms alone, forwards 20.0 -> 22.5 ms of CPU (x1.125): 56.25 ms in the window.
        # Rank 1: 54 ms alone, forwards 20.0 -> 20.2 ms (x1.01): 54.54 ms. Mean 55.395 ms.
        result = run([50.0, 54.0], [(20.0, 22.5), (20.0, 20.2)])
        self.assertEqual(harness.window_speed_factors(result), [1.125, 20.2 / 20.0])
        self.assertAlmostEqual(window_ms(result), (56.25 + 54.54) / 2)

    def test_a_machine_that_ran_faster_in_the_window_gives_less_compute(self):
        # 75 ms alone, forwards 25 -> 20 ms of CPU: 60 ms of compute in the window.
        self.assertAlmostEqual(window_ms(run([75.0], [(25.0, 20.0)])), 60.0)

    def test_a_report_without_the_clock_has_no_window_compute(self):
        self.assertIsNone(harness.window_compute_ms({"compute_ms_per_rank": [50.0]}))
        self.assertIsNone(harness.window_compute_ms(run([50.0], [(0.0, 20.0)])))


if __name__ == "__main__":
    unittest.main()
