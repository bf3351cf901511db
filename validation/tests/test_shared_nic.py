"""The profile's shared NIC efficiency from the harness's link probe: two streams at once
over one, at most 1; a report written before the probe measured two streams gives none."""

import unittest

import harness

LINK = {"inter_gbps": 1.0, "inter_cpu_ns_per_byte": 1.0, "inter_one_way_us": 100.0, "intra_gbps": 40.0,
        "intra_one_way_us": 5.0}


class SharedNicTest(unittest.TestCase):
    def test_two_streams_over_one(self):
        # Two streams summing 0.93 Gbit/s where one made 1.0: 0.93.
        self.assertAlmostEqual(harness.shared_nic_efficiency(dict(LINK, inter_two_flow_gbps=0.93)), 0.93)

    def test_never_above_one(self):
        # 0.9945 summed against 0.9928 alone is the one stream's noise: 1.
        link = dict(LINK, inter_gbps=0.9928, inter_two_flow_gbps=0.9945)
        self.assertEqual(harness.shared_nic_efficiency(link), 1.0)

    def test_the_profile_carries_it_when_measured(self):
        measured = harness.profile_json(2, 2, dict(LINK, inter_two_flow_gbps=0.9), 10.0, "p")
        self.assertAlmostEqual(measured["inter_node"]["shared_nic_efficiency"], 0.9)
        older = harness.profile_json(2, 2, LINK, 10.0, "p")
        self.assertNotIn("shared_nic_efficiency", older["inter_node"])


if __name__ == "__main__":
    unittest.main()
