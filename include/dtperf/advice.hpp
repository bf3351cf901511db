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
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "dtperf/evaluator.hpp"

namespace dtperf {

/// All-Reduce first, then the Decent-DP topologies in `topologies()` order, then SGP.
/// Unavailable topologies are kept, with their reason.
std::vector<SchemeOutcome> compare_schemes(Evaluator& evaluator, bool with_mixing = true);

struct FactorShare {
  std::string factor;   // "overlap", "heterogeneous links", "variable compute", "other"
  double seconds = 0.0; // of the iteration-time gain (Shapley value)
  double share = 0.0;   // of the total gain
};

struct BreakEven {
  bool found = false;
  double value = 0.0;       // Gbit/s per NIC, or nodes
  std::string description;  // one sentence
};

struct Advice {
  SchemeOutcome allreduce;
  std::vector<SchemeOutcome> candidates;  // Decent-DP topologies, available or not
  std::optional<SchemeOutcome> best;      // the fastest available candidate
  double speedup = 1.0;                   // T_allreduce / T_best
  std::string verdict;                    // "decentralize", "stay with all-reduce", "no clear winner"
  std::vector<FactorShare> factors;
  BreakEven bandwidth;
  BreakEven nodes;
  BreakEven variability;  // CV, as a fraction
  std::vector<std::string> caveats;
};

inline constexpr double kVerdictMargin = 1.05;
inline constexpr double kComparableSpeed = 1.03;

/// Called as each step of the advice starts ("the break-even NIC rate"), for progress.
using AdviceProgress = std::function<void(const char* step)>;
Advice advise(Evaluator& evaluator, const AdviceProgress& progress = {});

}  // namespace dtperf
