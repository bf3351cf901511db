"""The harness's accuracy bounds (harness.BOUNDS): a run is scored against its prediction,
or, where dtperf names a node link its crossing ranks would take in turns, against the range
from that time to the prediction; the error is the distance outside the range."""

import unittest

import harness


def cell(scheme, measured_ms, predicted_ms, in_turns_ms=None):
    predicted = {"iteration_ms": predicted_ms}
    if in_turns_ms is not None:
        predicted["node_link_in_turns_ms"] = in_turns_ms
    range_ms = harness.stated_range_ms(predicted)
    return {"layout": "2x2", "rate_gbps": 0.1, "delay_us": 2000, "scheme": scheme, "measured_ms": measured_ms,
            "range_ms": range_ms, "range_error": harness.range_error(range_ms, measured_ms)}


class BoundsTest(unittest.TestCase):
    def test_a_plain_prediction_is_its_own_range(self):
        # 110 predicted, 100 measured: +10 %; 90 predicted: -10 %.
        self.assertEqual(harness.stated_range_ms({"iteration_ms": 110.0}), (110.0, 110.0))
        self.assertAlmostEqual(harness.range_error((110.0, 110.0), 100.0), 0.10)
        self.assertAlmostEqual(harness.range_error((90.0, 90.0), 100.0), -0.10)

    def test_a_node_link_in_turns_opens_the_range_down_to_its_time(self):
        # The 2 x 2 cell at 100 Mbit/s: in phase 351.06 ms, in turns 307.45 ms.
        r = harness.stated_range_ms({"iteration_ms": 351.06, "node_link_in_turns_ms": 307.45})
        self.assertEqual(r, (307.45, 351.06))
        self.assertEqual(harness.range_error(r, 312.29), 0.0)  # measured inside
        self.assertAlmostEqual(harness.range_error(r, 290.0), 307.45 / 290.0 - 1)  # below: +6.0 %
        self.assertAlmostEqual(harness.range_error(r, 400.0), 351.06 / 400.0 - 1)  # above: -12.2 %

    def test_an_in_turns_time_above_the_prediction_does_not_widen_it(self):
        self.assertEqual(harness.stated_range_ms({"iteration_ms": 100.0, "node_link_in_turns_ms": 120.0}),
                         (100.0, 100.0))

    def test_the_bounds_name_every_run_over_the_max_and_the_median(self):
        held = [cell("all-reduce", 100.0, 104.0), cell("ring", 312.29, 351.06, 307.45), cell("one-peer-exp", 100.0, 96.0)]
        self.assertEqual(harness.bounds_failures(held), [])  # errors 4, 0, 4 %: median 4 %, max 4 %
        broken = [cell("all-reduce", 100.0, 112.0), cell("ring", 100.0, 107.0), cell("one-peer-exp", 100.0, 101.0)]
        # errors 12, 7, 1 %: median 7 % > 5 %, and all-reduce's 12 % > 10 %.
        self.assertEqual(harness.bounds_failures(broken),
                         ["median |error| 7.0 % is over 5 %",
                          "2x2 0.1 Gbit/s 2000 us all-reduce: |error| 12.0 % is over 10 %"])


if __name__ == "__main__":
    unittest.main()
