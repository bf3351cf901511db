"""Predict a validation report's runs again with another dtperf, without training again.

The harness's report (validation/harness.py -o REPORT) keeps everything each prediction was
made from: per run the links it measured, the compute time, the transport's CPU per byte
and the compute samples whose variation it used (beside the exchanges, or alone in an
older report); for the grid the collector's layer file, the CPU vector-add log and the
memory copy rate. This re-runs every prediction with the dtperf given (a changed model) and
prints each run's measured time, the report's prediction and the new one, then the new
median and max |error|, the scheme picks, and the errors against the ranges dtperf states
(harness.BOUNDS).
Only the measured times come from training, as in the harness.

  python3 validation/repredict.py REPORT [--build build] [-o NEW_REPORT]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from typing import Any

import harness

HERE = os.path.dirname(os.path.abspath(__file__))


def repredict(report: dict[str, Any], dtperf: str, work: str) -> list[harness.Cell]:
    """The report's cells with `predicted_ms` and `error` from `dtperf` (and the report's
    own under `report_predicted_ms`); a run timed several times has each timing predicted
    again and its median scored timing standing (harness.standing_cell)."""
    inputs = report.get("inputs")
    if inputs is None:
        raise ValueError("the report has no 'inputs' (written by an older harness): it cannot be re-predicted")
    model_path = os.path.join(work, "model.json")
    with open(model_path, "w") as f:
        json.dump(inputs["model"], f)
    reduction_log = os.path.join(work, "cpu_vec_add.log")
    with open(reduction_log, "w") as f:
        f.write(inputs["reduction_log"])
    by_key = {(c["layout"], c["rate_gbps"], c["delay_us"], c["scheme"]): c for c in report["cells"]}
    copy_gb_per_s = inputs["copy_gb_per_s"]

    def again(c: harness.Cell) -> harness.Cell:
        """One timing (or an older report's run) predicted again."""
        nodes, per_node = map(int, c["layout"].split("x"))
        if "compute_factors" in c:
            factors_used = c["compute_factors"]
        else:  # an older report: the run whose variation was used, by its scheme
            factors_used = harness.compute_factors(by_key[(c["layout"], c["rate_gbps"], c["delay_us"],
                                                           c["variation_from"])])
        profile, factors = harness.write_run_inputs(work, f"{c['layout']}-{c['rate_gbps']}-{c['delay_us']}-{c['scheme']}",
                                                    nodes, per_node, c["link"], copy_gb_per_s,
                                                    c["host_cpu_ns_per_byte"], factors_used, c.get("host_exchange_share"))
        result = harness.predict(dtperf, profile, model_path, reduction_log, c["scheme"], c["compute_ms"],
                                 ("--iteration-times", factors))
        range_ms = harness.stated_range_ms(result)
        return dict(c, report_predicted_ms=c["predicted_ms"], predicted_ms=result["iteration_ms"],
                    predicted_breakdown_ms=harness.predicted_breakdown_ms(result),
                    error=result["iteration_ms"] / c["measured_ms"] - 1, range_ms=range_ms,
                    range_error=harness.range_error(range_ms, c["measured_ms"]))

    out = []
    for c in report["cells"]:
        if "timings" in c:  # every timing again; the median scored one stands, as in the harness
            out.append(harness.standing_cell([again(t) for t in c["timings"]], c["scored_timings"]))
        else:
            out.append(again(c))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("report")
    parser.add_argument("--build", default=os.path.join(os.path.dirname(HERE), "build"))
    parser.add_argument("-o", "--output", help="the report with the new predictions, as JSON")
    args = parser.parse_args()
    with open(args.report) as f:
        report = json.load(f)
    dtperf = os.path.join(args.build, "src", "dtperf")
    with tempfile.TemporaryDirectory(prefix="dtperf-repredict.") as work:
        try:
            cells = repredict(report, dtperf, work)
        except ValueError as e:
            print(f"repredict: {args.report}: {e}", file=sys.stderr)
            return 2
    for c in cells:
        print(f"{c['layout']:>4} {c['rate_gbps']:5.2f} Gbit/s {c['delay_us']:5d} us  {c['scheme']:21s} "
              f"measured {c['measured_ms']:8.2f}  report {c['report_predicted_ms']:8.2f}  now "
              f"{c['predicted_ms']:8.2f} ms  ({100 * c['error']:+.1f} %)"
              + harness.range_note(c["range_ms"], c["predicted_ms"], c["range_error"]) + harness.timings_note(c))
    errors = sorted(abs(c["error"]) for c in cells)
    picks = harness.scheme_picks(cells)
    print(f"# {len(cells)} runs: median |error| {100 * statistics.median(errors):.1f} %, max "
          f"{100 * errors[-1]:.1f} %; faster scheme right in {sum(p['right'] for p in picks)} of {len(picks)} cells")
    for p in picks:
        if not p["right"]:
            print(f"#   {p['cell']}: picked {p['picked']}, {100 * p['gap']:.1f} % slower than {p['fastest']}")
    range_errors = sorted(abs(c["range_error"]) for c in cells)
    failures = harness.bounds_failures(cells)
    print(f"# against the ranges dtperf states: median |error| {100 * statistics.median(range_errors):.1f} %, max "
          f"{100 * range_errors[-1]:.1f} %; bounds: " + ("held" if not failures else "broken: " + "; ".join(failures)))
    if args.output:
        with open(args.output, "w") as f:
            json.dump(dict(report, cells=cells, median_abs_error=statistics.median(errors), max_abs_error=errors[-1],
                           scheme_picks=picks), f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
