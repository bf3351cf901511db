#include "dtperf/analysis/whatif.hpp"

#include <cmath>
#include <utility>

namespace dtperf {

namespace {

constexpr double kRelativeTolerance = 1e-4;
constexpr int kMaxBisections = 200;

ClusterProfile at_rate(ClusterProfile cluster, double gbps, bool line_rate) {
  cluster.inter.nic_gbps = gbps;
  if (line_rate) cluster.inter.transport_efficiency = 1.0;
  return cluster;
}

// The least x in [low, high] with reaches(x), for reaches monotone (false then true),
// bisected on a log scale; nullopt when reaches(high) is false.
template <typename Reaches>
std::optional<double> least_reaching(double low, double high, Reaches&& reaches) {
  if (!reaches(high)) return std::nullopt;
  if (reaches(low)) return low;
  for (int i = 0; i < kMaxBisections && high / low > 1.0 + kRelativeTolerance; ++i) {
    const double mid = std::sqrt(low * high);
    (reaches(mid) ? high : low) = mid;
  }
  return high;
}

}  // namespace

std::vector<RatePoint> scaling_by_rate(Evaluator& evaluator, const Scheme& scheme, std::span<const double> rates_gbps) {
  std::vector<RatePoint> points;
  for (const double gbps : rates_gbps) {
    RatePoint p;
    p.nic_gbps = gbps;
    p.at_profile = evaluator.evaluate_on(at_rate(evaluator.setup().cluster, gbps, false), scheme).iteration;
    p.at_line_rate = evaluator.evaluate_on(at_rate(evaluator.setup().cluster, gbps, true), scheme).iteration;
    points.push_back(p);
  }
  return points;
}

Solved least_rate_gbps(Evaluator& evaluator, const Scheme& scheme, double target, bool line_rate) {
  const auto scaling = [&](double gbps) {
    return evaluator.evaluate_on(at_rate(evaluator.setup().cluster, gbps, line_rate), scheme).iteration.scaling_factor;
  };
  Solved s;
  s.value = least_reaching(kMinRateGbps, kMaxRateGbps, [&](double gbps) { return scaling(gbps) >= target; });
  s.best_scaling = scaling(kMaxRateGbps);
  return s;
}

BoundAtAnyRate bound_at_any_rate(Evaluator& evaluator, const Scheme& scheme) {
  // Unbounded: a million times the bandwidth, no ceiling, no CPU cost per byte.
  constexpr double kUnbounded = 1e6;
  const ClusterProfile fast = at_rate(evaluator.setup().cluster, kMaxRateGbps, false);
  const auto scaling = [&](const ClusterProfile& cluster) {
    return evaluator.evaluate_on(cluster, scheme).iteration.scaling_factor;
  };
  BoundAtAnyRate out;
  out.best_scaling = scaling(fast);
  out.unbounded_scaling = out.best_scaling;
  ClusterProfile intra = fast;
  intra.intra.bandwidth_bytes_per_s *= kUnbounded;
  ClusterProfile host = fast;
  host.inter.host_gbps = 0.0;
  host.inter.host_cpu_ns_per_byte = 0.0;
  const std::pair<RateBound, double> lifted[] = {{RateBound::intra_node_link, scaling(intra)},
                                                 {RateBound::host_transport, scaling(host)}};
  for (const auto& [limit, unbounded] : lifted) {
    if (unbounded - out.best_scaling >= kBoundLiftPoints / 100.0 && unbounded > out.unbounded_scaling) {
      out.limit = limit;
      out.unbounded_scaling = unbounded;
    }
  }
  return out;
}

const char* bound_name(RateBound bound) {
  switch (bound) {
    case RateBound::intra_node_link: return "intra-node-link";
    case RateBound::host_transport: return "host-transport";
    case RateBound::compute_and_overheads: break;
  }
  return "compute-and-overheads";
}

Setup with_compression(Setup setup, double ratio, double codec_s_per_byte) {
  setup.workload.compression_ratio = ratio;
  if (ratio > 1.0 && codec_s_per_byte > 0.0) {
    setup.cluster.compute.iteration_overhead_s += codec_s_per_byte * setup.model->total_bytes();
  }
  return setup;
}

Solved least_compression(Evaluator& evaluator, const Scheme& scheme, double target, double codec_s_per_byte) {
  // One evaluator for every ratio (its workload set point by point, the codec's cost on
  // the cluster evaluated): the topology's schedule is compiled once, not per ratio (at
  // 1,048,576 GPUs that was most of whatif's time).
  const Setup base = evaluator.setup();
  const auto scaling = [&](double ratio) {
    const Setup at = with_compression(base, ratio, codec_s_per_byte);
    evaluator.set_workload(at.workload);
    return evaluator.evaluate_on(at.cluster, scheme).iteration.scaling_factor;
  };
  Solved s;
  s.value = least_reaching(1.0, kMaxCompression, [&](double ratio) { return scaling(ratio) >= target; });
  s.best_scaling = scaling(kMaxCompression);
  evaluator.set_workload(base.workload);
  return s;
}

NodesToWin least_nodes_to_win(Evaluator& evaluator, const Scheme& scheme, int max_nodes) {
  NodesToWin out;
  for (int nodes = 1; nodes <= max_nodes; ++nodes) {
    ClusterProfile cluster = evaluator.setup().cluster;
    cluster.nodes = nodes;
    const SchemeOutcome candidate = evaluator.evaluate_on(cluster, scheme);
    if (!candidate.available) continue;
    const SchemeOutcome baseline = evaluator.evaluate_on(cluster, Scheme::allreduce());
    out.speedup = baseline.iteration.iteration_s / candidate.iteration.iteration_s;
    if (out.speedup > 1.0) {
      out.nodes = nodes;
      return out;
    }
  }
  return out;
}

}  // namespace dtperf
