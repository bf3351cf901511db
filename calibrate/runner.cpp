#include "runner.hpp"

#include <fmt/format.h>

#include <iostream>

namespace dtperf::calibrate {

namespace {

void add_entry_results(const PlanEntry& entry, const std::vector<PointResult>& results,
                       const SweepCounts& counts, RawRun& run) {
  switch (entry.kind) {
    case EntryKind::all_reduce:
    case EntryKind::sendrecv: {
      RawCollective collective = make_raw_collective(entry, results, counts);
      if (!collective.points.empty()) run.collectives.push_back(std::move(collective));
      return;
    }
    case EntryKind::gemm:
      for (std::size_t p = 0; p < results.size(); ++p) {
        if (!results[p].measured) continue;
        const GemmShape& shape = entry.shapes[p];
        const double time_s = results[p].time_s;
        run.gemm.push_back({entry.dtype, shape.m, shape.n, shape.k, shape.flops(), time_s * 1e6,
                            time_s > 0.0 ? shape.flops() / time_s / 1e12 : 0.0});
      }
      return;
    case EntryKind::copy:
      for (std::size_t p = 0; p < results.size(); ++p) {
        if (!results[p].measured) continue;
        const double bytes = static_cast<double>(entry.sizes_bytes[p]);
        const double time_s = results[p].time_s;
        run.copy.push_back({entry.sizes_bytes[p], time_s * 1e6, time_s > 0.0 ? 2.0 * bytes / time_s / 1e9 : 0.0});
      }
      return;
  }
}

void report_entry(const PlanEntry& entry, const std::vector<PointResult>& results, std::size_t index,
                  std::size_t total, double elapsed_s) {
  std::size_t measured = 0;
  bool correct = true;
  for (const PointResult& result : results) {
    if (!result.measured) continue;
    ++measured;
    correct = correct && result.correct;
  }
  std::cerr << fmt::format("dtperf-calibrate: [{}/{}] {}: {} of {} points{} ({:.1f} s)\n", index + 1, total,
                           entry.label(), measured, results.size(), correct ? "" : ", WRONG RESULTS", elapsed_s);
}

void measure_spread(const Plan& plan, Backend& backend, RawRun& run) {
  Control& control = backend.control();
  const int iterations = plan.settings.spread_iterations;
  const RawSpread mine = make_raw_spread(control.rank(), backend.spread_samples_s(2, iterations));
  const std::vector<double> means_us = gather_nonnegative(control, mine.mean_us);
  const std::vector<double> stddevs_us = gather_nonnegative(control, mine.stddev_us);
  const std::vector<double> medians_us = gather_nonnegative(control, mine.median_us);
  const std::vector<double> robust_cvs = gather_nonnegative(control, mine.robust_cv);
  if (control.rank() != 0) return;
  for (int rank = 0; rank < control.world_size(); ++rank) {
    RawSpread spread;
    spread.rank = rank;
    spread.iterations = iterations;
    spread.mean_us = means_us[static_cast<std::size_t>(rank)];
    spread.stddev_us = stddevs_us[static_cast<std::size_t>(rank)];
    spread.cv = spread.mean_us > 0.0 ? spread.stddev_us / spread.mean_us : 0.0;
    spread.median_us = medians_us[static_cast<std::size_t>(rank)];
    spread.robust_cv = robust_cvs[static_cast<std::size_t>(rank)];
    run.iteration_spread.push_back(spread);
  }
}

/// Every rank's sample, reduced to the slowest rank's times; `covered` only if it held on
/// every rank.
void measure_contention(const Plan& plan, Backend& backend, RawRun& run) {
  if (plan.contention_nominal_s <= 0.0) return;
  const std::optional<ContentionSample> sample = backend.contention_sample(plan);
  if (!sample) return;
  Control& control = backend.control();
  std::vector<double> values{sample->gemm_alone_s, sample->gemm_beside_s, sample->collective_alone_s,
                             sample->collective_beside_s, sample->covered ? 0.0 : 1.0};
  control.max_all(values);
  if (control.rank() != 0) return;
  RawContention c;
  c.dtype = kContentionDtype;
  c.m = kContentionGemm.m;
  c.n = kContentionGemm.n;
  c.k = kContentionGemm.k;
  c.group = control.world_size() > 1 ? "world" : "self";
  c.ranks = control.world_size();
  c.nodes = control.world_size() > 1 ? run.nodes : 1;
  c.bytes = plan.contention_bytes;
  c.calls = kContentionCalls;
  c.gemm_time_us_alone = values[0] * 1e6;
  c.gemm_time_us_beside = values[1] * 1e6;
  c.collective_time_us_alone = values[2] * 1e6;
  c.collective_time_us_beside = values[3] * 1e6;
  c.covered = values[4] == 0.0;
  run.contention.push_back(c);
  std::cerr << fmt::format(
      "dtperf-calibrate: contention: GEMM x{:.3f} beside all_reduce, all_reduce x{:.3f} beside GEMMs{}\n",
      c.gemm_time_us_beside / c.gemm_time_us_alone, c.collective_time_us_beside / c.collective_time_us_alone,
      c.covered ? "" : " (not covered: the other side ended first)");
}

}  // namespace

void run_plan(const Plan& plan, Backend& backend, Budget& budget, RawRun& run) {
  Control& control = backend.control();
  const bool leader = control.rank() == 0;
  const SweepCounts counts{plan.settings.warmup, plan.settings.iterations};
  double later_nominal_s = plan.nominal_s();
  for (std::size_t i = 0; i < plan.entries.size(); ++i) {
    const PlanEntry& entry = plan.entries[i];
    later_nominal_s -= entry.nominal_s;
    const double allowance_s = budget.allowance_s(entry.nominal_s, later_nominal_s);
    std::unique_ptr<PointOps> ops = backend.ops_for(entry);
    const double start_s = budget.elapsed_s();
    const std::vector<PointResult> results = run_sweep(control, ops.get(), entry, counts, allowance_s, budget);
    ops.reset();
    if (!leader) continue;
    add_entry_results(entry, results, counts, run);
    report_entry(entry, results, i, plan.entries.size(), budget.elapsed_s() - start_s);
  }
  measure_contention(plan, backend, run);
  measure_spread(plan, backend, run);
  if (leader) {
    run.truncated = plan.truncated || budget.truncated;
    run.budget_s = budget.budget_s();
    run.elapsed_s = budget.elapsed_s();
  }
}

}  // namespace dtperf::calibrate
