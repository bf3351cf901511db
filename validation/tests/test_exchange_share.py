"""The harness's fit of the share of its CPU time an exchange waits for beside compute
(harness.host_exchange_share), on rounds generated from known shares."""

import random
import unittest

import harness


def rounds(share_w: float, cpu_ns: float, noise: float = 0.0, seed: int = 1) -> list[list[list[float]]]:
    """Per rank, rounds [bytes sent, alone s, beside s] whose stretch beside compute is
    max(1 + w s, s) (include/dtperf/contention.hpp), s = cpu_ns x bytes / alone, each
    beside time scaled by 1 + uniform(-noise, noise)."""
    rng = random.Random(seed)
    per_rank = []
    for _ in range(4):
        rank = []
        # 1 MB to 16 MB in 0.1 to 2 s: shares 0.008 to 1.28 at 8 ns per byte.
        for sent, alone in ((1e6, 0.1), (4e6, 0.2), (16e6, 0.1), (2e6, 2.0), (8e6, 0.5)):
            s = cpu_ns * 1e-9 * sent / alone
            beside = alone * max(1.0 + share_w * s, s) * (1.0 + rng.uniform(-noise, noise))
            rank.append([sent, alone, beside])
        per_rank.append(rank)
    return per_rank


def fitted(results: list[dict], cpu_ns: float) -> float:
    share = harness.host_exchange_share(results, cpu_ns)
    assert share is not None
    return share


class ExchangeShare(unittest.TestCase):
    def test_the_share_comes_back_from_exact_rounds(self):
        for w in (0.0, 0.3, 0.75, 1.0):
            result = {"exchange_rounds_per_rank": rounds(w, 8.0)}
            self.assertAlmostEqual(fitted([result], 8.0), w, delta=0.001)

    def test_the_share_comes_back_within_noise_of_two_percent(self):
        # w = 0.3 stretches the rounds above by 0.2 % to 38 % (the share 1.28: 1 + 0.3 x
        # 1.28); 2 % noise on that one alone moves w by about 0.02.
        result = {"exchange_rounds_per_rank": rounds(0.3, 8.0, noise=0.02, seed=7)}
        self.assertAlmostEqual(fitted([result], 8.0), 0.3, delta=0.05)

    def test_rounds_from_several_runs_pool_and_shares_stay_between_0_and_1(self):
        faster = {"exchange_rounds_per_rank": [[[8e6, 0.5, 0.4]]]}  # beside faster than alone
        self.assertEqual(harness.host_exchange_share([faster], 8.0), 0.0)
        slower = {"exchange_rounds_per_rank": [[[8e6, 0.5, 5.0]]]}  # 10x: more than sharing
        self.assertEqual(harness.host_exchange_share([slower], 8.0), 1.0)
        pooled = fitted([{"exchange_rounds_per_rank": rounds(0.5, 8.0)},
                                              {"exchange_rounds_per_rank": rounds(0.5, 8.0, seed=2)}], 8.0)
        self.assertAlmostEqual(pooled, 0.5, delta=0.001)

    def test_an_older_report_without_rounds_has_no_share(self):
        self.assertIsNone(harness.host_exchange_share([{"scheme": "ring"}], 8.0))
        self.assertIsNone(harness.exchange_stretch({"scheme": "ring"}))


if __name__ == "__main__":
    unittest.main()
