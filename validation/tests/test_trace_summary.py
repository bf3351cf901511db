"""trace_summary.py on a hand-made trace: the arithmetic in the comments."""

import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import trace_summary  # noqa: E402

# A rank of a 2-step period: iterations of 100, 300, 100 and 500 ms starting at 0, 0.1,
# 0.4 and 0.5 s. It waits 100 ms from 0.15 s and 100 ms from 0.35 s (both begun in the
# second iteration; the later one ends in the third), and 150 + 250 ms from 0.55 and 0.75 s
# (both in the fourth).
TRACE = {"rank": 0, "scheme": "ring", "steps_per_period": 2,
         "iteration_starts_s": [0.0, 0.1, 0.4, 0.5], "iteration_s": [0.1, 0.3, 0.1, 0.5],
         "events": [{"event": "launch", "step": 0, "bucket": 0, "t0_s": 0.05, "t1_s": 0.05},
                    {"event": "wait", "step": 1, "bucket": 0, "t0_s": 0.15, "t1_s": 0.25},
                    {"event": "wait", "step": 1, "bucket": 1, "t0_s": 0.35, "t1_s": 0.45},
                    {"event": "wait", "step": 1, "bucket": 0, "t0_s": 0.55, "t1_s": 0.70},
                    {"event": "wait", "step": 1, "bucket": 1, "t0_s": 0.75, "t1_s": 1.00}]}


class TraceSummaryTest(unittest.TestCase):
    def test_waits_go_to_the_iteration_they_began_in_and_periods_average_whole_periods(self):
        iterations_ms, waited_ms, periods_ms = trace_summary.rank_summary(TRACE)
        self.assertEqual([round(x) for x in iterations_ms], [100, 300, 100, 500])
        self.assertEqual([round(x) for x in waited_ms], [0, 200, 0, 400])  # 100 + 100, 150 + 250
        self.assertEqual([round(x) for x in periods_ms], [200, 300])  # (100 + 300) / 2, (100 + 500) / 2

    def test_reads_every_rank_of_a_run_from_a_directory(self):
        with tempfile.TemporaryDirectory() as directory:
            for rank in (0, 1):
                with open(os.path.join(directory, f"4x1-0.1-100-ring-rank{rank}.json"), "w") as f:
                    json.dump(dict(TRACE, rank=rank), f)
            found = trace_summary.runs(directory, set())
        self.assertEqual(list(found), ["4x1-0.1-100-ring"])
        self.assertEqual(sorted(found["4x1-0.1-100-ring"]), [0, 1])


if __name__ == "__main__":
    unittest.main()
