#include "sweep.hpp"

#include <algorithm>

namespace dtperf::calibrate {

namespace {

// Stands for "no value" in a max-reduction (every real value is larger).
constexpr double kNone = -1e300;

struct LocalPoint {
  bool measured = false;
  bool correct = false;
  double mean_s = 0.0;
  double median_s = -1.0;
};

/// Reduces the per-rank results of an entry over the world.
std::vector<PointResult> reduce_points(Control& control, const std::vector<LocalPoint>& local,
                                       std::size_t measured_points) {
  // Per point: [slowest mean, -fastest mean, any incorrect, slowest median]; idle ranks
  // contribute nothing.
  constexpr std::size_t kFields = 4;
  std::vector<double> values(kFields * measured_points, kNone);
  for (std::size_t p = 0; p < measured_points; ++p) {
    if (!local[p].measured) continue;
    values[kFields * p] = local[p].mean_s;
    values[kFields * p + 1] = -local[p].mean_s;
    values[kFields * p + 2] = local[p].correct ? 0.0 : 1.0;
    values[kFields * p + 3] = local[p].median_s;
  }
  control.max_all(values);
  std::vector<PointResult> results(local.size());
  for (std::size_t p = 0; p < measured_points; ++p) {
    PointResult& result = results[p];
    result.measured = values[kFields * p] > kNone;
    result.time_s = result.time_max_s = values[kFields * p];
    result.time_min_s = -values[kFields * p + 1];
    result.correct = result.measured && values[kFields * p + 2] <= 0.0;
    result.time_median_s = values[kFields * p + 3] > 0.0 ? values[kFields * p + 3] : -1.0;
  }
  return results;
}

}  // namespace

double Budget::allowance_s(double entry_nominal_s, double later_nominal_s) const {
  const double total_s = entry_nominal_s + later_nominal_s;
  const double share = total_s > 0.0 ? entry_nominal_s / total_s : 1.0;
  return std::max(0.0, remaining_s()) * share;
}

double estimate_point_s(const PlanEntry& entry, std::size_t point, std::size_t known, double known_call_s,
                        const SweepCounts& counts) {
  const double known_work = std::max(entry.point_work(known), 1.0);
  const double scale = std::max(1.0, entry.point_work(point) / known_work);
  return (1 + counts.warmup + counts.iterations) * known_call_s * scale;
}

std::vector<PointResult> run_sweep(Control& control, PointOps* ops, const PlanEntry& entry,
                                   const SweepCounts& counts, double allowance_s, Budget& budget) {
  const std::size_t points = entry.point_count();
  std::vector<LocalPoint> local(points);
  const Budget::Clock::time_point entry_start = Budget::Clock::now();
  const auto entry_elapsed_s = [&] {
    return std::chrono::duration<double>(Budget::Clock::now() - entry_start).count();
  };
  // control: [go for the next point (rank 0 decides), slowest mean call time of this point]
  std::vector<double> control_values{control.rank() == 0 && allowance_s > 0.0 ? 1.0 : 0.0, 0.0};
  control.max_all(control_values);
  bool go = control_values[0] > 0.0;
  double previous_call_s = 0.0;  // slowest mean of the point before the last one
  std::size_t measured = 0;
  for (std::size_t p = 0; p < points && go; ++p, ++measured) {
    if (ops != nullptr) {
      local[p].correct = ops->run_checked(p);
      ops->run(p, counts.warmup);
    }
    // Every rank starts its timed calls together, so communicators measured side by side
    // (concurrent pairs) really share the links for the whole timed loop, and the slowest
    // rank's mean is the time until all of them are done.
    std::vector<double> start_together{0.0};
    control.max_all(start_together);
    if (ops != nullptr) {
      local[p].mean_s = ops->time_s(p, counts.iterations);
      local[p].median_s = ops->last_median_s();
      local[p].measured = true;
    }
    // Rank 0 decides on point p+1 before it knows point p's slowest time, so it
    // extrapolates from point p-1 (known from the previous control exchange).
    bool next = p + 1 < points;
    if (next && p > 0) {
      const double estimate_s = estimate_point_s(entry, p + 1, p - 1, previous_call_s, counts);
      next = entry_elapsed_s() + estimate_s <= allowance_s;
    }
    control_values = {control.rank() == 0 && next ? 1.0 : 0.0, local[p].measured ? local[p].mean_s : 0.0};
    control.max_all(control_values);
    go = control_values[0] > 0.0;
    previous_call_s = control_values[1];
  }
  if (measured < points && control.rank() == 0) budget.truncated = true;
  return reduce_points(control, local, measured);
}

std::vector<double> gather_nonnegative(Control& control, double value) {
  std::vector<double> values(static_cast<std::size_t>(control.world_size()), 0.0);
  values.at(static_cast<std::size_t>(control.rank())) = value;
  control.max_all(values);
  return values;
}

}  // namespace dtperf::calibrate
