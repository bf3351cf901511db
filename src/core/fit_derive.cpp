// Profile parameters derived from measurements: GEMM efficiency, copy bandwidth,
// iteration spread, and link parameters from collective fits (fit.hpp documents the rules).
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "dtperf/fit.hpp"
#include "dtperf/network.hpp"
#include "dtperf/units.hpp"

namespace dtperf {

namespace {

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

// Least-squares non-decreasing fit of `values` with `weights` (pool adjacent violators).
std::vector<double> monotone_fit(const std::vector<double>& values, const std::vector<double>& weights) {
  struct Block {
    double value;
    double weight;
    std::size_t count;
  };
  std::vector<Block> blocks;
  for (std::size_t i = 0; i < values.size(); ++i) {
    blocks.push_back({values[i], weights[i], 1});
    while (blocks.size() > 1 && blocks[blocks.size() - 2].value > blocks.back().value) {
      const Block top = blocks.back();
      blocks.pop_back();
      Block& below = blocks.back();
      below.value = (below.value * below.weight + top.value * top.weight) / (below.weight + top.weight);
      below.weight += top.weight;
      below.count += top.count;
    }
  }
  std::vector<double> out;
  for (const auto& b : blocks) out.insert(out.end(), b.count, b.value);
  return out;
}

// Bandwidths from sweeps that stop early carry the largest size as a caveat.
std::optional<double> reach(const AlphaBetaFit& fit) {
  const double largest = fit.segments.back().max_bytes;
  if (largest >= 256.0 * 1024 * 1024) return std::nullopt;
  return largest;
}

}  // namespace

std::vector<GemmEfficiencyCurve> gemm_efficiency_curves(std::span<const GemmPoint> points,
                                                        const std::map<DType, double>& peak_flops_per_s,
                                                        bool monotone, std::vector<FitNote>& notes) {
  std::map<DType, std::vector<std::pair<double, double>>> by_dtype;  // flops, efficiency
  std::map<DType, int> clamped;
  std::map<DType, double> best_rate;
  for (const auto& p : points) {
    if (!(p.flops > 0.0) || !(p.time_s > 0.0)) throw std::invalid_argument("gemm: flops and time must be positive");
    const auto peak = peak_flops_per_s.find(p.dtype);
    if (peak == peak_flops_per_s.end()) {
      by_dtype.try_emplace(p.dtype);  // remembered to note the skip below
      continue;
    }
    const double rate = p.flops / p.time_s;
    best_rate[p.dtype] = std::max(best_rate[p.dtype], rate);
    double efficiency = rate / peak->second;
    if (efficiency > 1.0) {
      ++clamped[p.dtype];
      efficiency = 1.0;
    }
    by_dtype[p.dtype].emplace_back(p.flops, efficiency);
  }
  std::vector<GemmEfficiencyCurve> curves;
  for (auto& [dtype, list] : by_dtype) {
    if (list.empty()) {
      notes.push_back({.kind = FitNote::Kind::gemm_no_peak, .dtype = dtype});
      continue;
    }
    if (clamped[dtype] > 0) {
      notes.push_back({.kind = FitNote::Kind::gemm_above_peak,
                       .dtype = dtype,
                       .points = clamped[dtype],
                       .peak_flops_per_s = peak_flops_per_s.at(dtype),
                       .best_flops_per_s = best_rate[dtype]});
    }
    std::stable_sort(list.begin(), list.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    GemmEfficiencyCurve curve;
    curve.dtype = dtype;
    std::vector<double> weights;
    for (std::size_t i = 0; i < list.size();) {
      std::size_t j = i;
      double sum = 0.0;
      for (; j < list.size() && list[j].first == list[i].first; ++j) sum += list[j].second;
      curve.flops_and_efficiency.emplace_back(list[i].first, sum / static_cast<double>(j - i));
      weights.push_back(static_cast<double>(j - i));
      i = j;
    }
    if (monotone) {
      std::vector<double> values;
      for (const auto& [flops, efficiency] : curve.flops_and_efficiency) values.push_back(efficiency);
      const std::vector<double> fitted = monotone_fit(values, weights);
      for (std::size_t i = 0; i < fitted.size(); ++i) curve.flops_and_efficiency[i].second = fitted[i];
    }
    curves.push_back(std::move(curve));
  }
  return curves;
}

std::optional<double> copy_bandwidth_bytes_per_s(std::span<const CopyPoint> points) {
  if (points.empty()) return std::nullopt;
  double largest = 0.0;
  for (const auto& p : points) largest = std::max(largest, p.bytes);
  std::vector<double> rates;
  for (const auto& p : points) {
    if (!(p.time_s > 0.0)) throw std::invalid_argument("copy: time must be positive");
    if (p.bytes >= largest / 2.0) rates.push_back(p.bytes / p.time_s);
  }
  return median(std::move(rates));
}

std::optional<double> iteration_cv(std::span<const double> per_rank_cv) {
  if (per_rank_cv.empty()) return std::nullopt;
  return median(std::vector<double>(per_rank_cv.begin(), per_rank_cv.end()));
}

namespace {

constexpr double kLatencySizeLimit = 64.0 * 1024.0;  // bytes

bool is_pair_inter(const GroupFit& g) {
  return g.group == "pair_inter" || (g.group.empty() && g.fit.ranks == 2 && g.fit.nodes == 2);
}

bool has_latency(const GroupFit& g) { return g.fit.segments.front().min_bytes <= kLatencySizeLimit; }

// The fit with the most ranks among those `accept`s; nullptr if none.
template <typename Accept>
const GroupFit* most_ranks(std::span<const GroupFit> fits, Accept accept) {
  const GroupFit* best = nullptr;
  for (const auto& g : fits) {
    if (!g.fit.segments.empty() && accept(g) && (best == nullptr || g.fit.ranks > best->fit.ranks)) best = &g;
  }
  return best;
}

bool node_all_reduce(const GroupFit& g) {
  return g.fit.collective == "all_reduce" && g.fit.nodes == 1 && g.fit.ranks >= 2;
}
bool multi_node_all_reduce(const GroupFit& g) { return g.fit.collective == "all_reduce" && g.fit.nodes >= 2; }

void derive_intra(std::span<const GroupFit> fits, LinkMeasurements& m) {
  if (const GroupFit* node = most_ranks(fits, node_all_reduce)) {
    m.intra_bytes_per_s = node->fit.segments.back().bus_bytes_per_s;
    m.notes.push_back({.kind = FitNote::Kind::intra_bandwidth,
                       .ranks = node->fit.ranks,
                       .bytes_per_s = *m.intra_bytes_per_s,
                       .sweep_max_bytes = reach(node->fit)});
  }
  const GroupFit* node = most_ranks(fits, [](const GroupFit& g) { return node_all_reduce(g) && has_latency(g); });
  if (node == nullptr) return;
  const int p = node->fit.ranks;
  const double alpha = node->fit.segments.front().alpha_s;
  m.intra_latency_s = alpha / (2.0 * (p - 1));
  m.notes.push_back(
      {.kind = FitNote::Kind::intra_latency, .ranks = p, .latency_s = *m.intra_latency_s, .alpha_s = alpha});
}

void derive_nic(std::span<const GroupFit> fits, const LinkContext& context, LinkMeasurements& m) {
  const int rails = context.nics_per_node ? std::max(1, std::min(context.gpus_per_node, *context.nics_per_node)) : 1;
  const GroupFit* best_pair = nullptr;
  double best_node = 0.0;
  for (const auto& g : fits) {
    if (g.fit.collective != "sendrecv" || !is_pair_inter(g) || g.fit.segments.empty()) continue;
    const double node = std::max(g.concurrent_per_node, rails) * g.fit.segments.back().bus_bytes_per_s;
    if (node > best_node) {
      best_node = node;
      best_pair = &g;
    }
  }
  if (best_pair != nullptr) {
    m.node_nic_bytes_per_s = best_node;
    m.notes.push_back({.kind = FitNote::Kind::nic_from_sendrecv,
                       .concurrent = best_pair->concurrent_per_node,
                       .rails = rails,
                       .bytes_per_s = best_node,
                       .pair_bytes_per_s = best_pair->fit.segments.back().bus_bytes_per_s,
                       .sweep_max_bytes = reach(best_pair->fit)});
    return;
  }
  const GroupFit* multi = most_ranks(fits, multi_node_all_reduce);
  if (multi == nullptr) return;
  const int per_node = multi->fit.ranks / multi->fit.nodes;
  const double busbw = multi->fit.segments.back().bus_bytes_per_s;
  if (m.intra_bytes_per_s && busbw >= kIntraBoundFraction * *m.intra_bytes_per_s) {
    m.notes.push_back({.kind = FitNote::Kind::nic_intra_bound,
                       .ranks = multi->fit.ranks,
                       .nodes = multi->fit.nodes,
                       .bytes_per_s = busbw,
                       .limit_bytes_per_s = *m.intra_bytes_per_s});
    return;
  }
  m.node_nic_bytes_per_s = busbw * std::max(1.0, static_cast<double>(rails) / per_node);
  m.notes.push_back({.kind = FitNote::Kind::nic_from_all_reduce,
                     .ranks = multi->fit.ranks,
                     .nodes = multi->fit.nodes,
                     .rails = rails,
                     .bytes_per_s = *m.node_nic_bytes_per_s,
                     .pair_bytes_per_s = busbw,
                     .sweep_max_bytes = reach(multi->fit)});
}

void derive_inter_latency(std::span<const GroupFit> fits, const LinkContext& context, LinkMeasurements& m) {
  const GroupFit* pair = nullptr;
  for (const auto& g : fits) {
    if (g.fit.collective == "sendrecv" && is_pair_inter(g) && !g.fit.segments.empty() && has_latency(g) &&
        (pair == nullptr || g.concurrent_per_node < pair->concurrent_per_node)) {
      pair = &g;
    }
  }
  if (pair != nullptr) {
    m.inter_latency_s = pair->fit.segments.front().alpha_s;
    m.notes.push_back({.kind = FitNote::Kind::inter_latency_sendrecv, .latency_s = *m.inter_latency_s});
    return;
  }
  const GroupFit* pair_ar = most_ranks(fits, [](const GroupFit& g) {
    return g.fit.collective == "all_reduce" && g.fit.ranks == 2 && g.fit.nodes == 2 && has_latency(g);
  });
  if (pair_ar != nullptr) {
    const double alpha = pair_ar->fit.segments.front().alpha_s;
    m.inter_latency_s = alpha / 2.0;
    m.notes.push_back(
        {.kind = FitNote::Kind::inter_latency_pair_ring, .latency_s = *m.inter_latency_s, .alpha_s = alpha});
    return;
  }
  const GroupFit* multi = most_ranks(fits, [](const GroupFit& g) { return multi_node_all_reduce(g) && has_latency(g); });
  if (multi == nullptr) return;
  const int p = multi->fit.ranks;
  const int nodes = multi->fit.nodes;
  const double alpha = multi->fit.segments.front().alpha_s;
  const double intra = m.intra_latency_s.value_or(context.known_intra_latency_s.value_or(0.0));
  // The engine's ring (network.hpp), inverted.
  const RingSteps steps = allreduce_ring_steps(nodes, p / nodes);
  const double inter = (alpha - steps.intra * intra) / steps.inter;
  if (inter <= 0.0) {
    // The intra-node steps alone explain the measured alpha (NCCL's multi-node algorithms
    // hide per-step latency this formula assumes): the data cannot separate the two.
    m.notes.push_back({.kind = FitNote::Kind::inter_latency_not_derived,
                       .ranks = p,
                       .nodes = nodes,
                       .alpha_s = alpha,
                       .intra_latency_s = intra});
    return;
  }
  m.inter_latency_s = inter;
  m.notes.push_back({.kind = FitNote::Kind::inter_latency_ring,
                     .ranks = p,
                     .nodes = nodes,
                     .latency_s = *m.inter_latency_s,
                     .alpha_s = alpha,
                     .intra_latency_s = intra});
}

}  // namespace

LinkMeasurements derive_link_measurements(std::span<const GroupFit> fits, const LinkContext& context) {
  LinkMeasurements m;
  derive_intra(fits, m);
  derive_nic(fits, context, m);
  derive_inter_latency(fits, context, m);
  return m;
}

void apply_link_measurements(ClusterProfile& profile, const LinkMeasurements& measured, const KnownLinks& known,
                             std::vector<FitNote>& notes) {
  if (measured.intra_bytes_per_s) {
    const double achieved = *measured.intra_bytes_per_s;
    if (known.intra_link_bytes_per_s && achieved <= *known.intra_link_bytes_per_s) {
      profile.intra.bandwidth_bytes_per_s = *known.intra_link_bytes_per_s;
      profile.intra.efficiency = achieved / *known.intra_link_bytes_per_s;
    } else {
      if (known.intra_link_bytes_per_s) {
        notes.push_back({.kind = FitNote::Kind::intra_above_link_rate,
                         .bytes_per_s = achieved,
                         .limit_bytes_per_s = *known.intra_link_bytes_per_s});
      } else {
        notes.push_back({.kind = FitNote::Kind::intra_rate_unknown, .bytes_per_s = achieved});
      }
      profile.intra.bandwidth_bytes_per_s = achieved;
      profile.intra.efficiency = 1.0;
    }
  }
  if (measured.intra_latency_s) profile.intra.latency_s = *measured.intra_latency_s;
  if (measured.node_nic_bytes_per_s) {
    const double achieved = *measured.node_nic_bytes_per_s;
    const int nics = known.nics_per_node.value_or(profile.inter.nics_per_node);
    profile.inter.nics_per_node = nics;
    if (known.nic_gbps) {
      const double line = nics * units::gbps_to_bytes_per_s(*known.nic_gbps);
      profile.inter.nic_gbps = *known.nic_gbps;
      profile.inter.transport_efficiency = std::min(1.0, achieved / line);
      if (achieved > line) {
        notes.push_back({.kind = FitNote::Kind::nic_above_line_rate,
                         .nics = nics,
                         .bytes_per_s = achieved,
                         .limit_bytes_per_s = line,
                         .nic_gbps = *known.nic_gbps});
      }
    } else {
      profile.inter.nic_gbps = units::bytes_per_s_to_gbps(achieved / nics);
      profile.inter.transport_efficiency = 1.0;
      notes.push_back({.kind = FitNote::Kind::nic_rate_unknown, .nics = nics, .bytes_per_s = achieved});
    }
  }
  if (measured.inter_latency_s) profile.inter.latency_s = *measured.inter_latency_s;
}

std::vector<FitNote> link_warnings(const LinkMeasurements& measured, const KnownLinks& known,
                                   int profile_nics_per_node) {
  std::vector<FitNote> warnings;
  if (measured.intra_bytes_per_s && known.intra_link_bytes_per_s) {
    const double achieved = *measured.intra_bytes_per_s;
    const double ceiling = kRingLinkCeiling * *known.intra_link_bytes_per_s;
    if (achieved > ceiling) {
      warnings.push_back({.kind = FitNote::Kind::intra_above_ring_ceiling,
                          .bytes_per_s = achieved,
                          .limit_bytes_per_s = *known.intra_link_bytes_per_s});
    } else if (achieved < kFarBelowFraction * ceiling) {
      warnings.push_back(
          {.kind = FitNote::Kind::intra_far_below, .bytes_per_s = achieved, .limit_bytes_per_s = ceiling});
    }
  }
  if (measured.node_nic_bytes_per_s && known.nic_gbps) {
    const double achieved = *measured.node_nic_bytes_per_s;
    const int nics = known.nics_per_node.value_or(profile_nics_per_node);
    const double ceiling = kRdmaWireCeiling * nics * units::gbps_to_bytes_per_s(*known.nic_gbps);
    const auto from_all_reduce = std::find_if(measured.notes.begin(), measured.notes.end(), [](const FitNote& n) {
      return n.kind == FitNote::Kind::nic_from_all_reduce;
    });
    if (achieved > ceiling) {
      const bool two_nodes = from_all_reduce != measured.notes.end() && from_all_reduce->nodes == 2 &&
                             from_all_reduce->ranks > 2;  // with one rank per node, tree and ring move the same
      warnings.push_back({.kind = two_nodes ? FitNote::Kind::nic_two_node_inflated : FitNote::Kind::nic_above_ceiling,
                          .ranks = two_nodes ? from_all_reduce->ranks : 0,
                          .nodes = two_nodes ? 2 : 0,
                          .nics = nics,
                          .bytes_per_s = achieved,
                          .limit_bytes_per_s = ceiling,
                          .nic_gbps = *known.nic_gbps});
    } else if (achieved < kFarBelowFraction * ceiling) {
      warnings.push_back({.kind = FitNote::Kind::nic_far_below,
                          .nics = nics,
                          .bytes_per_s = achieved,
                          .limit_bytes_per_s = ceiling,
                          .nic_gbps = *known.nic_gbps,
                          .intra_measured = measured.intra_bytes_per_s.has_value()});
    }
  }
  return warnings;
}

std::vector<FitNote> gemm_warnings(std::span<const GemmEfficiencyCurve> curves,
                                   const std::map<DType, double>& peak_flops_per_s, double assumed_efficiency) {
  std::vector<FitNote> warnings;
  for (const auto& curve : curves) {
    const auto peak = peak_flops_per_s.find(curve.dtype);
    if (curve.flops_and_efficiency.empty() || peak == peak_flops_per_s.end()) continue;
    double best = 0.0;
    for (const auto& [flops, efficiency] : curve.flops_and_efficiency) best = std::max(best, efficiency);
    if (best < kFarBelowFraction * assumed_efficiency) {
      warnings.push_back({.kind = FitNote::Kind::gemm_far_below,
                          .dtype = curve.dtype,
                          .peak_flops_per_s = peak->second,
                          .best_flops_per_s = best * peak->second,
                          .assumed_efficiency = assumed_efficiency});
    }
  }
  return warnings;
}

}  // namespace dtperf
