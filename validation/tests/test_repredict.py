"""repredict.py on a hand-made report of one cell: the runs are predicted again by dtperf,
the errors and the scheme pick come from the new predictions, and a report without the
harness's inputs is refused. Needs the dtperf binary ($DTPERF); skipped without it."""

import json
import os
import tempfile
import unittest
from typing import Any

import repredict

DTPERF = os.environ.get("DTPERF", "")

# Two 1 MB layers (5 ms of backward each) on 2 nodes x 1 rank at 100 Mbit/s: All-Reduce
# moves 2 MB per iteration each way, AER half of it every other step, so dtperf predicts
# AER about twice as fast.
MODEL = {"schema": "dtperf.model/1", "name": "tiny", "sample_unit": "sample", "batch_per_gpu": 32,
         "param_bytes": 4,
         "layers": [{"name": "b", "params": 250000, "backward_us": 5000, "dtype": "float32"},
                    {"name": "w", "params": 250000, "backward_us": 5000, "dtype": "float32"}]}
LINK = {"inter_gbps": 0.1, "inter_cpu_ns_per_byte": 1.0, "inter_one_way_us": 100.0, "intra_gbps": 40.0,
        "intra_one_way_us": 5.0}


def cell(scheme, measured_ms, stored_ms):
    return {"layout": "2x1", "rate_gbps": 0.1, "delay_us": 100, "scheme": scheme, "link": LINK, "compute_ms": 20.0,
            "measured_ms": measured_ms, "predicted_ms": stored_ms, "error": stored_ms / measured_ms - 1,
            "host_cpu_ns_per_byte": 1.0, "variation_from": "all-reduce",
            "compute_samples_ms_per_rank": [[20.0, 20.0, 20.0], [20.0, 20.0, 20.0]]}


@unittest.skipUnless(os.access(DTPERF, os.X_OK), "set DTPERF to the dtperf binary")
class RepredictTest(unittest.TestCase):
    def setUp(self):
        # Stored predictions the wrong way round: they pick All-Reduce, measured 2 x slower.
        self.report: dict[str, Any] = {"inputs": {"model": MODEL, "reduction_log": "1024,0.000001\n4194304,0.0005\n",
                                  "copy_gb_per_s": 40.0},
                       "cells": [cell("all-reduce", 180.0, 50.0), cell("alternating-exp-ring", 90.0, 900.0)]}

    def test_every_run_is_predicted_again_and_the_pick_follows(self):
        with tempfile.TemporaryDirectory() as work:
            cells = repredict.repredict(self.report, DTPERF, work)
        by = {c["scheme"]: c for c in cells}
        self.assertEqual([c["measured_ms"] for c in cells], [180.0, 90.0])
        self.assertEqual([c["report_predicted_ms"] for c in cells], [50.0, 900.0])
        for c in cells:
            self.assertAlmostEqual(c["error"], c["predicted_ms"] / c["measured_ms"] - 1)
        # dtperf: All-Reduce 181 ms, AER 91 ms (steady compute: the samples do not vary).
        self.assertAlmostEqual(by["all-reduce"]["predicted_ms"], 181.0, delta=5.0)
        self.assertAlmostEqual(by["alternating-exp-ring"]["predicted_ms"], 91.0, delta=5.0)
        [pick] = repredict.harness.scheme_picks(cells)
        self.assertEqual((pick["picked"], pick["fastest"], pick["right"]), ("alternating-exp-ring",) * 2 + (True,))

    def test_each_prediction_says_where_its_time_goes(self):
        with tempfile.TemporaryDirectory() as work:
            cells = repredict.repredict(self.report, DTPERF, work)
        for c in cells:
            b = c["predicted_breakdown_ms"]
            # The iteration is forward + backward + exposed communication + the step.
            self.assertAlmostEqual(b["forward"] + b["backward"] + b["exposed_comm"] + b["optimizer"],
                                   c["predicted_ms"], places=6)
        # All-Reduce on 2 x 1 sends the whole 2 MB each way: 2e6 x 8 / 1e8 = 160 ms at
        # 100 Mbit/s, plus its steps' latency (under 1 ms); none of it hides behind compute.
        b = next(c for c in cells if c["scheme"] == "all-reduce")["predicted_breakdown_ms"]
        self.assertAlmostEqual(b["comm_busy"], 160.0, delta=2.0)
        self.assertEqual(b["comm_busy"], b["exposed_comm"])

    def test_a_measured_all_reduce_table_replaces_the_formula(self):
        # The harness's collective table: gloo's all-reduce measured on the cell, twice
        # what the link's formula gives (2 lockstep steps of 100 us + bytes at 12.5 MB/s).
        # All-Reduce's 2 MB per iteration then take 2 x 160 ms: 181 + 160 = 341 ms.
        link = dict(LINK, all_reduce_points_bytes_us=[[b, 2 * (200.0 + b / 12.5)] for b in (1 << 16, 1 << 20, 1 << 22)])
        self.report["cells"][0]["link"] = link
        profile = repredict.harness.profile_json(2, 1, link, 40.0, "x")
        self.assertEqual(profile["calibration"]["collectives"],
                         [{"collective": "all_reduce", "ranks": 2, "nodes": 2,
                           "points_bytes_us": link["all_reduce_points_bytes_us"]}])
        self.assertNotIn("calibration", repredict.harness.profile_json(2, 1, LINK, 40.0, "x"))
        with tempfile.TemporaryDirectory() as work:
            cells = repredict.repredict(self.report, DTPERF, work)
        self.assertAlmostEqual(cells[0]["predicted_ms"], 341.0, delta=10.0)

    def test_a_run_timed_three_times_stands_for_its_median_timing_again(self):
        # All-Reduce timed three times: 150, 181 and 230 ms measured, dtperf's 181 ms each
        # time (the same inputs): errors +21, 0 and -21 %, the median is the second. With
        # the second unscored (unsettled), the lower median of the other two is the third.
        timings = [dict(cell("all-reduce", ms, 50.0), compute_factors=[1.0, 1.0]) for ms in (150.0, 181.0, 230.0)]
        run = dict(timings[0], timings=timings, scored_timings=[0, 1, 2], standing_timing=0)
        with tempfile.TemporaryDirectory() as work:
            [again] = repredict.repredict(dict(self.report, cells=[run]), DTPERF, work)
            self.assertEqual((again["standing_timing"], again["measured_ms"]), (1, 181.0))
            self.assertEqual([round(t["error"], 1) for t in again["timings"]], [0.2, 0.0, -0.2])
            [again] = repredict.repredict(dict(self.report, cells=[dict(run, scored_timings=[0, 2])]), DTPERF, work)
            self.assertEqual((again["standing_timing"], again["measured_ms"]), (2, 230.0))

    def test_a_report_without_inputs_is_refused(self):
        del self.report["inputs"]
        with tempfile.TemporaryDirectory() as work, self.assertRaises(ValueError):
            repredict.repredict(self.report, DTPERF, work)


if __name__ == "__main__":
    unittest.main()
