#pragma once
// Network what-ifs on one configuration, the questions [NET] asks: how does the scaling
// factor change with the inter-node rate, what rate or what gradient compression reaches
// a target scaling factor, and from how many nodes on does a scheme beat All-Reduce.
// Pure: every point is one Evaluator evaluation of a changed cluster or workload.
//
// Solvers use bisection on a monotone quantity, so each answer is the least value to a
// relative 1e-4:
//  - rate: the scaling factor never falls as the NIC rate rises (every transfer is
//    shorter); searched on a log scale over [kMinRateGbps, kMaxRateGbps];
//  - compression: the wire carries bytes / ratio, so the scaling factor never falls as
//    the ratio rises, unless the codec's own cost per byte grows faster than the wire
//    time falls (then the answer may not exist); searched over [1, kMaxCompression];
//  - nodes: not monotone in general (topologies allow only some sizes), so every allowed
//    node count from 1 up is evaluated until the scheme wins.
// A target that the search range cannot reach is `std::nullopt`, with the best value
// found, so a report can say "compute-bound: at most 71 % at any rate".
#include <optional>
#include <span>
#include <vector>

#include "dtperf/analysis/evaluator.hpp"
#include "dtperf/limits.hpp"

namespace dtperf {

// The searches span every NIC rate an input may have (limits::kNicGbps).
inline constexpr double kMinRateGbps = limits::kNicGbps.low;
inline constexpr double kMaxRateGbps = limits::kNicGbps.high;
inline constexpr double kMaxCompression = 1e4;

/// The rates [NET] and capacity planners ask about, Gbit/s per NIC.
inline constexpr double kDefaultRatesGbps[] = {1, 10, 25, 40, 100, 200, 400, 800};

struct RatePoint {
  double nic_gbps = 0.0;
  IterationResult at_profile;    // at the profile's transport efficiency (achieved rate)
  IterationResult at_line_rate;  // transport efficiency 1
};

/// `scheme` at each inter-node rate (the profile's other values unchanged).
std::vector<RatePoint> scaling_by_rate(Evaluator& evaluator, const Scheme& scheme, std::span<const double> rates_gbps);

struct Solved {
  std::optional<double> value;  // the least value that reaches the target, if any
  double best_scaling = 0.0;    // the scaling factor at the end of the search range
};

/// The least NIC rate (Gbit/s) at which `scheme` reaches `target` scaling, at the
/// profile's transport efficiency or (line_rate) at efficiency 1.
Solved least_rate_gbps(Evaluator& evaluator, const Scheme& scheme, double target, bool line_rate);

/// The least gradient compression ratio at which `scheme` reaches `target`. The codec
/// costs `codec_s_per_byte` per gradient byte (encoding and decoding, on the critical
/// path once per iteration: added to the fixed per-iteration overhead). Evaluated on the
/// evaluator's setup; its workload is restored after.
Solved least_compression(Evaluator& evaluator, const Scheme& scheme, double target, double codec_s_per_byte);

/// The setup with a compression ratio and its codec cost applied.
Setup with_compression(Setup setup, double ratio, double codec_s_per_byte);

/// What holds the scaling factor down when the NIC rate is no longer the limit. At the
/// top of the rate range each remaining link is made unbounded in turn (the intra-node
/// link's bandwidth, the host-driven transport's ceiling and CPU cost per byte); the one
/// whose removal lifts the scaling factor most is named if it lifts it by at least
/// kBoundLiftPoints, else compute and the fixed per-iteration overheads are. A PCIe-only
/// node (T4 x 8 at 15.8 GB/s per GPU) is bounded by its PCIe, not by its compute.
enum class RateBound { compute_and_overheads, intra_node_link, host_transport };

/// One percentage point of scaling: the tables print tenths, and a lift under a point
/// would not change what a reader should buy.
inline constexpr double kBoundLiftPoints = 1.0;

struct BoundAtAnyRate {
  RateBound limit = RateBound::compute_and_overheads;
  double best_scaling = 0.0;       // at kMaxRateGbps (the profile's transport efficiency)
  double unbounded_scaling = 0.0;  // also with the limiting link unbounded (= best for compute)
};

BoundAtAnyRate bound_at_any_rate(Evaluator& evaluator, const Scheme& scheme);

/// The bound's name in JSON: "intra-node-link", "host-transport", "compute-and-overheads".
const char* bound_name(RateBound bound);

struct NodesToWin {
  std::optional<int> nodes;     // the least node count where `scheme` is faster
  double speedup = 0.0;         // All-Reduce time / scheme time there (or at max_nodes)
};

/// The least node count in [1, max_nodes] (among those `scheme` allows) at which it is
/// faster than All-Reduce.
NodesToWin least_nodes_to_win(Evaluator& evaluator, const Scheme& scheme, int max_nodes);

}  // namespace dtperf
