"""trace_summary.py on a hand-made trace: the arithmetic in the comments."""

import json
import os
import tempfile
import unittest

import trace_summary

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

    def test_ddp_phases_split_each_iteration_at_its_buckets(self):
        # Two DDP iterations, times in ms. The first: forward 0-10, backward 10-40 with
        # buckets 0 (launched 15, ended 25) and 1 (20-38), optimizer 40-41. The second:
        # forward 50-62, backward 62-90 with buckets 0 (64-80) and 1 (70-86), optimizer
        # 90-92. Forward (10 + 12) / 2 = 11; to the first launch (5 + 2) / 2 = 3.5; in
        # flight (38 - 15 + 86 - 64) / 2 = 22.5; after the last bucket (2 + 4) / 2 = 3;
        # optimizer (1 + 2) / 2 = 1.5; bucket 0 (10 + 16) / 2 = 13, bucket 1 (18 + 16) / 2 = 17.
        # After backward began, bucket 0 launched at (5 + 2) / 2 = 3.5 and ended at
        # (15 + 18) / 2 = 16.5; bucket 1 at (10 + 8) / 2 = 9 and (28 + 24) / 2 = 26.
        def event(name, bucket, t0_ms, t1_ms):
            return {"event": name, "step": 0, "bucket": bucket, "t0_s": t0_ms / 1e3, "t1_s": t1_ms / 1e3}
        trace = dict(TRACE, scheme="all-reduce", steps_per_period=1, events=[
            event("allreduce", 0, 15, 25), event("allreduce", 1, 20, 38),
            event("forward", -1, 0, 10), event("backward", -1, 10, 40), event("optimizer", -1, 40, 41),
            event("allreduce", 0, 64, 80), event("allreduce", 1, 70, 86),
            event("forward", -1, 50, 62), event("backward", -1, 62, 90), event("optimizer", -1, 90, 92)])
        phases = trace_summary.ddp_phases(trace)
        assert phases is not None
        bucket_ms = phases.pop("bucket_ms")
        launch_end_ms = phases.pop("bucket_launch_end_ms")
        self.assertEqual({k: round(v, 6) for k, v in phases.items()},
                         {"forward": 11, "to_first_launch": 3.5, "buckets_in_flight": 22.5,
                          "after_last_bucket": 3, "optimizer": 1.5})
        self.assertEqual([round(b, 6) for b in bucket_ms], [13, 17])
        self.assertEqual([(round(t0, 6), round(t1, 6)) for t0, t1 in launch_end_ms], [(3.5, 16.5), (9, 26)])

    def test_the_link_busy_share_per_bin_after_each_start(self):
        # Bins of 2 ms over 8 ms. After the start at 0: sending 0.5-1.5 ms (bin 0: 1 ms of 2),
        # 3-7 ms (bin 1: 1 ms, bin 2: 2 ms, bin 3: 1 ms): 50, 50, 100, 50 %. After the start
        # at 10 ms: sending 10-12 ms (bin 0: 100 %). Mean over the two starts: 75, 25, 50, 25 %.
        sent = [(0.0005, 0.0015), (0.003, 0.007), (0.010, 0.012)]
        shares = trace_summary.busy_shares(sent, [0.0, 0.010], bin_ms=2.0, span_ms=8.0)
        self.assertEqual([round(x, 6) for x in shares], [0.75, 0.25, 0.5, 0.25])

    def test_the_link_timeline_is_read_per_queue_in_seconds(self):
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
            f.write("# queue transmit_start_ns transmit_end_ns wire_bytes\n"
                    "1 3000000 4000000 1514\n0 2000000 2500000 1514\n1 1000000 2000000 1514\n")
        try:
            links = trace_summary.read_timeline(f.name)
        finally:
            os.unlink(f.name)
        self.assertEqual(links, {0: [(0.002, 0.0025)], 1: [(0.001, 0.002), (0.003, 0.004)]})

    def test_a_decentralized_rank_s_periods_start_at_its_first_step(self):
        # TRACE's two whole periods start at 0 and 0.4 s and last 100 + 300 and 100 + 500 ms:
        # 500 ms on average.
        starts, period_ms = trace_summary.period_starts(TRACE)
        self.assertEqual(starts, [0.0, 0.4])
        self.assertAlmostEqual(period_ms, 500.0)

    def test_a_decentralized_trace_has_no_ddp_phases(self):
        self.assertIsNone(trace_summary.ddp_phases(TRACE))

    def test_each_timing_has_its_own_tcp_counters(self):
        # Per scheme, per timing, per node; "ring-t2" is the ring's second timing.
        first, second = [{"TcpRetransSegs": 1}, {"TcpRetransSegs": 0}], [{"TcpRetransSegs": 7}, {"TcpRetransSegs": 2}]
        schemes = {"ring": [first, second], "one-peer-exp": [first]}
        self.assertEqual(trace_summary.timing_counters(schemes, "ring"), first)
        self.assertEqual(trace_summary.timing_counters(schemes, "ring-t2"), second)
        self.assertIsNone(trace_summary.timing_counters(schemes, "ring-t3"))
        self.assertIsNone(trace_summary.timing_counters(schemes, "all-reduce"))
        # An older trace: one timing per run, per node.
        self.assertEqual(trace_summary.timing_counters({"ring": first}, "ring"), first)
        self.assertIsNone(trace_summary.timing_counters({"ring": first}, "ring-t2"))


if __name__ == "__main__":
    unittest.main()
