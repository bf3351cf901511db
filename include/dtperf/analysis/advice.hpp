#pragma once
// "Should I decentralize?": All-Reduce against every applicable gossip topology (and SGP),
// the verdict, where the gain comes from, where it ends, and what to watch out for.
//
// Verdict: the best Decent-DP topology's speedup over All-Reduce. "Best": among the
// topologies within 3 % of the fastest (closer than the model can tell apart), the one
// with the largest spectral gap, whose replicas agree soonest. dtperf's validated
// accuracy is about 10 % per prediction, so it calls a winner only beyond a 5 % margin:
// "decentralize" (>= 1.05), "stay with all-reduce" (<= 1/1.05), "no clear winner" between.
//
// Attribution: the gain G = T_allreduce - T_gossip is attributed to [DEC]'s three factors
// (overlap across iterations, heterogeneous links, variable compute) by switching each
// off in the model, combined exactly with Shapley values over the 2^3 on/off settings;
// what remains with all three off is "other" (the exchanges' volume and pattern).
//
// Break-even: the inter-node rate per NIC (0.1 to 10,000 Gbit/s, log scan then bisection)
// and the node count (1 to 1,024, doubling scan then integer bisection) at which the best
// topology's speedup crosses 1; and the compute variability (CV from 0 to 100 %, of the
// given law or normal, with any persistent slow ranks kept) at which the chosen
// topology's speedup crosses 1. With variable compute, scans and searches simulate at
// most 200 iterations per point; the seed stays fixed, so every point sees the same
// draws scaled by its CV and the search is smooth.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "dtperf/analysis/evaluator.hpp"
#include "dtperf/names.hpp"

namespace dtperf {

/// Called as each step of a long computation starts ("the break-even NIC rate", "ring (3
/// of 18 schemes)"), for progress.
using AdviceProgress = std::function<void(const char* step)>;

/// All-Reduce first, then the Decent-DP topologies in `topologies()` order, then SGP.
/// Unavailable topologies are kept, with their reason.
std::vector<SchemeOutcome> compare_schemes(Evaluator& evaluator, bool with_mixing = true,
                                           const AdviceProgress& progress = {});

// The advice is data: verdicts, factors, break-even sides and caveats are values, and
// io/render.hpp (render_advice.cpp) renders them as sentences (text) and as fields (JSON).

// uncertain: a profile fitted to runs leaves the speedup's P10-P90 band on both sides of
// 1 (report.hpp's advise report decides it and names the measurement that would settle it).
enum class Verdict : std::uint8_t { decentralize, stay_with_allreduce, no_clear_winner, does_not_fit, uncertain };
template <>
struct EnumNames<Verdict> {
  static constexpr Named<Verdict> table[] = {
      {Verdict::decentralize, "decentralize"},
      {Verdict::stay_with_allreduce, "stay with all-reduce"},
      {Verdict::no_clear_winner, "no clear winner"},
      {Verdict::does_not_fit, "does not fit"},
      {Verdict::uncertain, "uncertain"},
  };
};

enum class Factor : std::uint8_t { overlap, heterogeneous_links, variable_compute, other };
template <>
struct EnumNames<Factor> {
  static constexpr Named<Factor> table[] = {
      {Factor::overlap, "overlap"},
      {Factor::heterogeneous_links, "heterogeneous links"},
      {Factor::variable_compute, "variable compute"},
      {Factor::other, "other"},
  };
};

struct FactorShare {
  Factor factor = Factor::other;
  double seconds = 0.0; // of the iteration-time gain (Shapley value)
  double share = 0.0;   // of the total gain
};

/// Where decentralized training stops (or starts) being faster along one axis: the NIC
/// rate (Gbit/s per NIC), the node count, or the compute CV (a fraction).
struct BreakEven {
  enum class Outcome : std::uint8_t {
    crosses,         // faster on one side of `value`, slower on the other
    always_faster,   // over the whole range searched
    always_slower,
    not_applicable,  // see `why`
  };
  // does_not_fit: not searched, no replicated scheme fits in GPU memory at this size.
  // too_large: not searched, the search would simulate more rank-buckets than its limit
  // (advice.cpp: kMaxSearchRankBuckets for the CV, kMaxRateSearchRankBuckets for the NIC
  // rate with variable compute); `simulated` says how many, `simulated_limit` the limit.
  enum class Why : std::uint8_t { none, one_node, no_topology, does_not_fit, too_large };
  Outcome outcome = Outcome::not_applicable;
  Why why = Why::none;
  double value = 0.0;         // crosses: the break-even point (nodes: the first count past it)
  bool faster_below = false;  // crosses: decentralized training is faster below `value`
  double last_below = 0.0;    // nodes, crosses: the largest count before `value`
  double range_low = 0.0;     // the range searched
  double range_high = 0.0;
  double simulated = 0.0;  // too_large: the rank-buckets each of the search's simulated iterations would take
  double simulated_limit = 0.0;
  bool found() const { return outcome == Outcome::crosses; }
};
template <>
struct EnumNames<BreakEven::Outcome> {
  static constexpr Named<BreakEven::Outcome> table[] = {
      {BreakEven::Outcome::crosses, "crosses"},
      {BreakEven::Outcome::always_faster, "always_faster"},
      {BreakEven::Outcome::always_slower, "always_slower"},
      {BreakEven::Outcome::not_applicable, "not_applicable"},
  };
};

/// Something to know before acting on the verdict.
struct Caveat {
  enum class Kind : std::uint8_t {
    consensus,               // the chosen topology's spectral gap: how fast replicas agree
    local_batch,             // [DEC]'s accumulation advice for small local batches
    not_applicable,          // a topology that does not fit (`reason`)
    straggler,               // a persistent slow rank paces gossip too
    network_not_bottleneck,  // All-Reduce exposes < 2 % of its iteration as communication
    gain_from_overlap,       // most of the gain is overlap, not decentralization
    does_not_fit,            // a scheme (`topology`) needs more GPU memory than there is
  };
  Kind kind = Kind::consensus;
  std::string topology;                 // consensus
  double spectral_gap = 0.0;            // consensus
  bool exact_average_per_period = false;
  double batch_per_gpu = 0.0;           // local_batch
  std::string sample_unit;
  bool small_batch = false;             // below the model's usual batch
  std::string reason;                   // not_applicable: why the topology does not fit
  int straggler_rank = 0;               // straggler: the rank that waits least
  double idle_min_s = 0.0;
  double idle_max_s = 0.0;
  std::vector<std::string> schemes;     // does_not_fit: the schemes that need
  double memory_bytes = 0.0;            // this much per GPU (to 0.1 GiB)
  double capacity_bytes = 0.0;          // of the GPU's memory
};
template <>
struct EnumNames<Caveat::Kind> {
  static constexpr Named<Caveat::Kind> table[] = {
      {Caveat::Kind::consensus, "consensus"},
      {Caveat::Kind::local_batch, "local_batch"},
      {Caveat::Kind::not_applicable, "not_applicable"},
      {Caveat::Kind::straggler, "straggler"},
      {Caveat::Kind::network_not_bottleneck, "network_not_bottleneck"},
      {Caveat::Kind::gain_from_overlap, "gain_from_overlap"},
      {Caveat::Kind::does_not_fit, "does_not_fit"},
  };
};

/// Low-communication training beside the verdict (not ranked by it: training apart for H
/// steps changes the optimisation, not only the time): DiLoCo and local SGD with the
/// setup's options, the fewest inner steps H at which DiLoCo is faster than All-Reduce
/// (outcome crosses: `value`; always_faster: already at the least H the variant allows;
/// always_slower: not below 65,536), and the NIC rate at which it is as fast.
struct LowCommunication {
  SchemeOutcome diloco;
  SchemeOutcome local_sgd;
  double speedup = 1.0;  // T_allreduce / T_diloco, per inner step
  BreakEven inner_steps;
  BreakEven bandwidth;   // Gbit/s per NIC
};

struct Advice {
  SchemeOutcome allreduce;
  std::vector<SchemeOutcome> candidates;  // Decent-DP's gossip topologies, available or not
  // Decent-DP's `complete` topology: an all-reduce of parameters overlapped with the next
  // iteration. Reported beside the verdict, never ranked as decentralized training.
  SchemeOutcome parameter_allreduce;
  // SGP (overlapped and not) and D-PSGD: predicted and reported beside the verdict, not
  // candidates for it: they exchange whole models without a spectral gap to rank them
  // by, and the factor attribution is defined for Decent-DP's bucketed exchange.
  std::vector<SchemeOutcome> whole_model_gossip;
  std::optional<SchemeOutcome> best;      // the fastest available candidate that fits in memory
  // When All-Reduce does not fit in GPU memory: the fastest sharded scheme that does;
  // with variable compute, predicted without it (sharded schemes are modelled without).
  std::optional<SchemeOutcome> sharded_alternative;
  bool sharded_without_variability = false;
  // With variable compute and no replicated scheme fitting in GPU memory: every replicated
  // scheme above was predicted without it (for reference; nothing is ranked).
  bool unfit_without_variability = false;
  double speedup = 1.0;                   // T_allreduce / T_best
  Verdict verdict = Verdict::no_clear_winner;
  std::vector<FactorShare> factors;
  BreakEven bandwidth;    // Gbit/s per NIC
  BreakEven nodes;
  BreakEven variability;  // CV as a fraction, for `best` (not_applicable without one)
  NoiseLaw variability_law = NoiseLaw::normal;  // the law the CV search used
  std::vector<Caveat> caveats;
  // With at least two groups of the setup's local SGD options (and without variable compute).
  std::optional<LowCommunication> low_communication;
};

inline constexpr double kVerdictMargin = 1.05;
inline constexpr double kComparableSpeed = 1.03;

/// The runnable candidates other than the chosen one within kComparableSpeed of the fastest
/// (the set the choice was made from): ties the model cannot tell apart, broken by the
/// spectral gap.
std::vector<const SchemeOutcome*> tied_with_best(const Advice& advice);

Advice advise(Evaluator& evaluator, const AdviceProgress& progress = {});

/// How the break-even NIC rate search reads its grid of rates (advice.cpp).
enum class RateScan : std::uint8_t {
  bounded,     // skips the rates whose side follows from two evaluated ones (what advise does)
  every_rate,  // evaluates every rate of the grid in turn (the reference the tests hold it to)
};

/// The NIC rate at which the best Decent-DP topology and All-Reduce change sides, on the
/// evaluator's setup; `first_topology`: the one tried first at each rate (the likeliest
/// winner). Both scans give the same answer wherever no scheme's time rises with the rate
/// or falls faster than 1 / rate.
BreakEven bandwidth_break_even(Evaluator& evaluator, const std::string& first_topology,
                               RateScan scan = RateScan::bounded);

}  // namespace dtperf
