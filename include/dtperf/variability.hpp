#pragma once
// Variable compute (MODELS.md section 6): each rank's forward and backward time in each
// iteration is the deterministic one times a factor
//   f(rank, k) = persistent(rank) x noise(rank, k),
// where the noise has mean 1 and is drawn from a normal law (truncated at 0.05), a
// lognormal law with the given coefficient of variation, or resampled from measured
// iteration times (each divided by their mean). Persistent factors describe heterogeneity
// that does not change: a throttled GPU (rank 5 at 1.2), a slower node (node 3 at 2.5,
// e.g. T4s among A100s).
//
// Draws are reproducible: a seed gives the same factors on every platform (xoshiro256**
// and our own transforms, no implementation-defined standard distributions; normals by
// Marsaglia and Tsang's ziggurat, which needs a logarithm only in 1 draw of ~80), drawn
// iteration by iteration for ranks 0..n-1.
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "dtperf/names.hpp"

namespace dtperf {

enum class NoiseLaw : std::uint8_t { none, normal, lognormal, empirical };
template <>
struct EnumNames<NoiseLaw> {
  static constexpr Named<NoiseLaw> table[] = {
      {NoiseLaw::none, "none"},
      {NoiseLaw::normal, "normal"},
      {NoiseLaw::lognormal, "lognormal"},
      {NoiseLaw::empirical, "empirical"},
  };
};

struct Variability {
  NoiseLaw law = NoiseLaw::none;
  double cv = 0.0;                           // normal, lognormal
  std::vector<double> empirical_factors;     // empirical: samples / their mean
  std::vector<std::pair<int, double>> slow_ranks;  // (rank, factor)
  std::vector<std::pair<int, double>> slow_nodes;  // (node, factor)
  std::uint64_t seed = 1;
  int iterations = 1000;                     // simulated after the warm-up
  int warmup_iterations = 50;

  bool random() const { return law != NoiseLaw::none && (law == NoiseLaw::empirical || cv > 0.0); }
  bool persistent() const { return !slow_ranks.empty() || !slow_nodes.empty(); }
  bool any() const { return random() || persistent(); }
};

/// The work of one variable-compute simulation, in rank-steps: in each simulated
/// iteration (a gossip warm-up included) each rank computes each bucket, one step, and
/// takes part in each of the bucket's exchange rounds, one step each (All-Reduce: none;
/// its collective is one operation for all ranks). The simulations' inner loops do one
/// rank-step at a time, so their time grows with this (limits::kMaxRankSteps).
struct SimulationWork {
  double ranks = 0.0;
  double buckets = 0.0;
  double rounds_per_bucket = 0.0;  // exchange rounds per rank and bucket, over the period
  double iterations = 0.0;         // simulated, warm-up included
  double measured_iterations = 0.0;  // of those, measured (the rest: warm-up)
  int period = 1;                    // the measured iterations are whole periods of this
  double rank_steps_per_iteration() const { return ranks * buckets * (1.0 + rounds_per_bucket); }
  double rank_steps() const { return rank_steps_per_iteration() * iterations; }
  /// The most measured iterations, in whole periods, that keep rank_steps() within
  /// `limit` beside the same warm-up; 0 when none does.
  double most_measured_iterations(double limit) const;
  /// What one simulated iteration costs on the reference core, and the whole simulation
  /// (limits.hpp, kMaxCommandSimulationS: the rates and their measurements).
  double estimated_s_per_iteration() const;
  double estimated_s() const { return estimated_s_per_iteration() * iterations; }
};

/// Per-rank persistent factors for `ranks` ranks on nodes of `ranks_per_node` (1 where
/// none is given; a rank on a slow node that is also named gets both multiplied).
std::vector<double> persistent_factors(const Variability& v, int ranks, int ranks_per_node);

/// A seeded stream of per-rank factors, one iteration at a time.
class NoiseStream {
 public:
  NoiseStream(const Variability& v, int ranks, int ranks_per_node);
  /// Fills `factors` (one per rank) for the next iteration.
  void next(std::span<double> factors);

 private:
  double draw();
  std::uint64_t bits();
  double uniform();  // in (0, 1)
  double standard_normal();
  double factor_of_normal(double x) const;  // normal or lognormal law: the factor of a standard normal draw

  const Variability& v_;
  std::vector<double> persistent_;
  std::uint64_t state_[4];
  double log_sigma_ = 0.0;
  double log_mu_ = 0.0;

  friend double test_standard_normal(NoiseStream& stream);
};

/// One standard normal draw of the stream (for the sampler's own tests).
double test_standard_normal(NoiseStream& stream);

/// Expected maximum of n standard normal draws and its standard deviation, by numerical
/// integration of n x phi(x) Phi(x)^(n-1) (for tests and the advisor's explanations).
std::pair<double, double> normal_maximum_moments(int n);

}  // namespace dtperf
