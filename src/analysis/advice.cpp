#include "dtperf/analysis/advice.hpp"

#include "dtperf/analysis/crossing.hpp"
#include "dtperf/error.hpp"
#include "dtperf/limits.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <functional>
#include <limits>
#include <span>
#include <string>

#include <fmt/format.h>

namespace dtperf {

namespace {

constexpr double kMinGbps = 0.1;
constexpr double kMaxGbps = 10000.0;
constexpr int kGbpsScanPoints = 41;
constexpr int kMaxNodes = 1024;
constexpr int kMaxSearchInnerSteps = 1 << 16;

// A scheme advise may recommend: it runs on this cluster and fits in GPU memory.
bool runnable(const SchemeOutcome& o) { return o.available && o.memory.fits(); }

// Faster wins; within 0.1 % (the model cannot tell them apart) the one that puts fewer
// bytes through the NICs wins, then the earlier in the list.
bool better(const SchemeOutcome& a, const SchemeOutcome& b) {
  const double ta = a.iteration.iteration_s;
  const double tb = b.iteration.iteration_s;
  if (std::abs(ta - tb) > 1e-3 * std::min(ta, tb)) return ta < tb;
  return a.iteration.inter_bytes_per_node < b.iteration.inter_bytes_per_node;
}

std::vector<Scheme> whole_model_gossip_schemes() { return {Scheme::sgp(), Scheme::sgp_sync(), Scheme::dpsgd()}; }

std::vector<Scheme> decentdp_schemes() {
  std::vector<Scheme> out;
  for (const TopologyInfo& t : topologies()) {
    if (t.gossip) out.push_back(Scheme::gossip(t.name));
  }
  return out;
}

// What one NIC rate tells the break-even scan: whether the alternative is faster than
// All-Reduce there (nullopt: none applies), All-Reduce's time, and a time that carries the
// verdict to other rates (rate_break_even's bounds). Faster: an alternative wins wherever
// All-Reduce takes longer than `alternative_s` (+inf where no such time is known); slower:
// no alternative takes less than `alternative_s` here.
struct RateVerdict {
  std::optional<bool> faster;
  double allreduce_s = 0.0;
  double alternative_s = 0.0;
  std::string alternative;  // faster: the one that wins by `alternative_s`
};

// Whether the best topology on `cluster` is faster than All-Reduce, nullopt if none
// applies: the sign of speedup - 1, all the break-even searches use. It needs not predict
// every topology: once one runs more than better()'s 0.1 % tie margin faster than
// All-Reduce, the best, which ties at most that margin from the fastest, is faster too.
// (Only a chain of ties, each topology within 0.1 % of the next, could carry the best
// further; tests check the crossings found against every topology predicted.) `first`
// (the topology best at the setup, the likeliest winner) is tried first; otherwise every
// topology is predicted and the best chosen by better(), in list order.
RateVerdict topology_verdict_on(Evaluator& e, const ClusterProfile& cluster, const std::string& first) {
  RateVerdict out;
  out.allreduce_s = e.evaluate_on(cluster, Scheme::allreduce()).iteration.iteration_s;
  const double allreduce_s = out.allreduce_s;
  const std::vector<Scheme> schemes = decentdp_schemes();
  std::vector<std::optional<SchemeOutcome>> outcomes(schemes.size());
  const auto predict = [&](std::size_t i) -> const SchemeOutcome& {
    if (!outcomes[i]) outcomes[i] = e.evaluate_on(cluster, schemes[i]);
    return *outcomes[i];
  };
  const auto clearly_faster = [&](const SchemeOutcome& o) {
    return runnable(o) && o.iteration.iteration_s * (1.0 + 1e-3) < allreduce_s;
  };
  const auto faster_by = [&](const SchemeOutcome& o) {
    out.faster = true;
    out.alternative_s = o.iteration.iteration_s * (1.0 + 1e-3);
    out.alternative = o.scheme.name();
    return out;
  };
  for (std::size_t i = 0; i < schemes.size(); ++i) {
    if (schemes[i].topology == first && clearly_faster(predict(i))) return faster_by(*outcomes[i]);
  }
  for (std::size_t i = 0; i < schemes.size(); ++i) {
    if (clearly_faster(predict(i))) return faster_by(*outcomes[i]);
  }
  std::optional<SchemeOutcome> best;
  double least_s = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < schemes.size(); ++i) {
    const SchemeOutcome& o = predict(i);
    if (!runnable(o)) continue;
    least_s = std::min(least_s, o.iteration.iteration_s);
    if (!best || better(o, *best)) best = o;
  }
  if (!best) return out;
  out.faster = allreduce_s / best->iteration.iteration_s - 1.0 > 0.0;
  out.alternative_s = *out.faster ? std::numeric_limits<double>::infinity() : least_s;
  return out;
}

std::optional<bool> topology_wins_on(Evaluator& e, const ClusterProfile& cluster, const std::string& first) {
  return topology_verdict_on(e, cluster, first).faster;
}

// The best topology's advantage over All-Reduce on `cluster`, speedup - 1 (every topology
// predicted, the best chosen by better()), nullopt if none applies: the value whose sign
// topology_wins_on gives.
std::optional<double> topology_advantage_on(Evaluator& e, const ClusterProfile& cluster) {
  const double allreduce_s = e.evaluate_on(cluster, Scheme::allreduce()).iteration.iteration_s;
  std::optional<SchemeOutcome> best;
  for (const Scheme& scheme : decentdp_schemes()) {
    SchemeOutcome o = e.evaluate_on(cluster, scheme);
    if (runnable(o) && (!best || better(o, *best))) best = std::move(o);
  }
  if (!best) return std::nullopt;
  return allreduce_s / best->iteration.iteration_s - 1.0;
}

// `allreduce` and `best`: the two predicted with every factor on (the real world), which
// is the gain G of all three factors.
std::vector<FactorShare> attribute(Evaluator& e, const SchemeOutcome& allreduce, const SchemeOutcome& best) {
  // G(S): the gain with exactly the factors in S switched on (bit 0 overlap, bit 1
  // heterogeneous links, bit 2 variable compute).
  std::array<double, 8> gain{};
  gain[7] = allreduce.iteration.iteration_s - best.iteration.iteration_s;
  for (int mask = 0; mask < 7; ++mask) {
    const Factors f{(mask & 1) != 0, (mask & 2) != 0, (mask & 4) != 0};
    gain[static_cast<std::size_t>(mask)] =
        e.evaluate(Scheme::allreduce(), f).iteration.iteration_s - e.evaluate(best.scheme, f).iteration.iteration_s;
  }
  // Shapley weights for three players: |S| = 0 -> 1/3, 1 -> 1/6, 2 -> 1/3.
  const double weight[3] = {1.0 / 3.0, 1.0 / 6.0, 1.0 / 3.0};
  const Factor names[3] = {Factor::overlap, Factor::heterogeneous_links, Factor::variable_compute};
  std::vector<FactorShare> shares;
  const double total = gain[7];
  for (int i = 0; i < 3; ++i) {
    double phi = 0.0;
    for (int mask = 0; mask < 8; ++mask) {
      if (mask & (1 << i)) continue;
      phi += weight[std::popcount(static_cast<unsigned>(mask))] *
             (gain[static_cast<std::size_t>(mask | (1 << i))] - gain[static_cast<std::size_t>(mask)]);
    }
    shares.push_back({names[i], phi, total != 0.0 ? phi / total : 0.0});
  }
  shares.push_back({Factor::other, gain[0], total != 0.0 ? gain[0] / total : 0.0});
  return shares;
}

// Break-even searches stop when the bracket is this narrow (relative, for rates; absolute,
// for a CV): reports print three or four significant digits.
constexpr double kRateTolerance = 1e-4;
constexpr double kCvTolerance = 1e-4;

// Whether a verdict found at two rates of the scan, `a` at rate_a below and `b` at rate_b
// above, holds at each rate between them (`between`), from two premises about every time
// the model predicts, each a max-plus function (maxima and sums) of compute times and
// exchange prices, and every price a latency plus bytes over a rate:
//  - monotone: no time rises with the NIC rate (every price falls with it);
//  - homogeneous: for rates r < r', T(r') >= (r / r') T(r) and T(r) <= (r' / r) T(r'),
//    since a price times its rate never falls with the rate and compute does not change
//    (no time falls faster than 1 / rate). So between rate_a and rate_b a time is at least
//    (rate_a / r) T(rate_a) and at most (rate_b / r) T(rate_b).
// Faster: the alternative's time, at most the least of its two bounds (its own time at
// rate_a, and at rate_b scaled where the same alternative won there), stays under
// All-Reduce's, at least the larger of its two. Slower: every alternative's least time at
// least All-Reduce's, bounded the other way round.
bool verdict_holds_between(const RateVerdict& a, double rate_a, const RateVerdict& b, double rate_b,
                           std::span<const double> between) {
  const bool faster = *a.faster;
  for (const double r : between) {
    if (faster) {
      const double alternative_s = std::min(
          a.alternative_s, a.alternative == b.alternative ? b.alternative_s * rate_b / r
                                                          : std::numeric_limits<double>::infinity());
      if (!(alternative_s < std::max(b.allreduce_s, a.allreduce_s * rate_a / r))) return false;
    } else {
      const double alternative_s = std::max(b.alternative_s, a.alternative_s * rate_a / r);
      if (!(alternative_s >= std::min(a.allreduce_s, b.allreduce_s * rate_b / r))) return false;
    }
  }
  return true;
}

// The first index of the scan (in (low, high]) whose verdict differs from low's, nullopt
// if there is none; fills `at` as it evaluates. The interval is split in two until each
// part is settled by verdict_holds_between or has no rate inside: of the 41 rates, a side
// far from a crossing needs a handful. nullopt with `dense` set: a rate where nothing
// applies, or an All-Reduce time against either premise of verdict_holds_between, was met,
// and the caller scans every rate.
template <typename VerdictAt>
std::optional<int> first_change(VerdictAt&& verdict_at, std::span<const double> rates, int low, int high,
                                bool& dense) {
  if (dense) return std::nullopt;
  const RateVerdict& a = verdict_at(low);
  const RateVerdict& b = verdict_at(high);
  const double rate_low = rates[static_cast<std::size_t>(low)];
  const double rate_high = rates[static_cast<std::size_t>(high)];
  if (!a.faster || !b.faster || b.allreduce_s > a.allreduce_s || b.allreduce_s * rate_high < a.allreduce_s * rate_low) {
    dense = true;
    return std::nullopt;
  }
  if (high == low + 1) return *a.faster != *b.faster ? std::optional<int>(high) : std::nullopt;
  if (*a.faster == *b.faster &&
      verdict_holds_between(a, rate_low, b, rate_high,
                            rates.subspan(static_cast<std::size_t>(low) + 1, static_cast<std::size_t>(high - low - 1)))) {
    return std::nullopt;
  }
  const int middle = low + (high - low) / 2;
  if (const auto change = first_change(verdict_at, rates, low, middle, dense)) return change;
  if (dense) return std::nullopt;
  return first_change(verdict_at, rates, middle, high, dense);
}

// Where `verdict_on(cluster)` (whether the alternative beats All-Reduce, with the times
// that bound it: RateVerdict) changes along the NIC rate: the first change among
// kGbpsScanPoints rates, then that bracket narrowed on a log scale to kRateTolerance.
// RateScan::every_rate evaluates the rates in turn; RateScan::bounded skips those
// first_change settles (the same rates found wherever no time rises with the rate; it
// falls back to every rate where one does). `advantage_on(cluster)` is the value whose
// sign the verdict tells (speedup - 1; nullopt where nothing applies, read as -1, no
// speedup at all): the verdict may stop early (at the first topology clearly faster),
// advantage_on predicts everything. The narrowing reads the advantage's values
// (crossing.hpp: ITP, at most one evaluation beyond bisection's count); where the values
// at the bracket's ends do not lie on the sides the scan found (a chain of near-ties, see
// topology_verdict_on), it bisects on the verdict's signs instead.
template <typename VerdictOn, typename Advantage>
BreakEven rate_break_even(Evaluator& e, VerdictOn&& verdict_on, Advantage&& advantage_on, RateScan scan) {
  ClusterProfile cluster = e.setup().cluster;
  const auto faster_at = [&](double gbps) {
    cluster.inter.nic_gbps = gbps;
    return verdict_on(cluster).faster;
  };
  // Of ln(rate), for the narrowing.
  const auto advantage_at_log = [&](double log_gbps) {
    cluster.inter.nic_gbps = std::exp(log_gbps);
    return advantage_on(cluster).value_or(-1.0);
  };
  BreakEven out;
  out.range_low = kMinGbps;
  out.range_high = kMaxGbps;
  if (cluster.nodes < 2) {
    out.why = BreakEven::Why::one_node;
    return out;
  }
  const double step = std::pow(kMaxGbps / kMinGbps, 1.0 / (kGbpsScanPoints - 1));
  std::array<double, kGbpsScanPoints> rates{};
  for (int i = 0; i < kGbpsScanPoints; ++i) {
    rates[static_cast<std::size_t>(i)] = i == 0 ? kMinGbps : kMinGbps * std::pow(step, i);
  }
  const auto rate = [&](int i) { return rates[static_cast<std::size_t>(i)]; };
  std::vector<std::optional<RateVerdict>> at(kGbpsScanPoints);
  const auto verdict_at = [&](int i) -> const RateVerdict& {
    if (!at[static_cast<std::size_t>(i)]) {
      cluster.inter.nic_gbps = rate(i);
      at[static_cast<std::size_t>(i)] = verdict_on(cluster);
    }
    return *at[static_cast<std::size_t>(i)];
  };
  const auto first = verdict_at(0).faster;
  if (!first) {
    out.why = BreakEven::Why::no_topology;
    return out;
  }
  // The first rate whose verdict differs from the one before it (nullopt for none), and
  // the verdict before it.
  std::optional<int> change;
  bool previous = *first;
  bool dense = scan == RateScan::every_rate;
  if (!dense) {
    change = first_change(verdict_at, rates, 0, kGbpsScanPoints - 1, dense);
    if (change) previous = *verdict_at(*change - 1).faster;
  }
  if (dense) {  // every rate in turn; a rate where nothing applies keeps the verdict before
    for (int i = 1; i < kGbpsScanPoints && !change; ++i) {
      const bool now = verdict_at(i).faster.value_or(previous);
      if (now != previous) {
        change = i;
      } else {
        previous = now;
      }
    }
  }
  if (!change) {
    out.outcome = previous ? BreakEven::Outcome::always_faster : BreakEven::Outcome::always_slower;
    return out;
  }
  const bool now = !previous;
  double low = rate(*change - 1);
  double high = rate(*change);
  const double value_low = advantage_at_log(std::log(low));
  const double value_high = advantage_at_log(std::log(high));
  if ((value_low > 0.0) == previous && (value_high > 0.0) == now) {
    const CrossingBracket crossing =
        narrow_crossing(advantage_at_log, std::log(low), value_low, std::log(high), value_high, std::log1p(kRateTolerance));
    low = std::exp(crossing.low);
    high = std::exp(crossing.high);
  } else {
    while (high > low * (1.0 + kRateTolerance)) {
      const double mid = std::sqrt(low * high);
      (faster_at(mid).value_or(false) == previous ? low : high) = mid;
    }
  }
  out.outcome = BreakEven::Outcome::crosses;
  out.value = std::sqrt(low * high);
  out.faster_below = previous;
  return out;
}

// DiLoCo with the setup's options against All-Reduce's `allreduce_s`; nullopt where it
// cannot run.
std::optional<double> low_communication_advantage(Evaluator& e, const ClusterProfile& cluster, double allreduce_s) {
  const SchemeOutcome o = e.evaluate_on(cluster, Scheme::diloco());
  if (!runnable(o)) return std::nullopt;
  return allreduce_s / o.iteration.iteration_s - 1.0;
}

// The fewest inner steps H (from the least the variant allows up to kMaxSearchInnerSteps,
// doubling then bisecting; the time per step falls as H grows) at which DiLoCo is faster
// than All-Reduce.
BreakEven inner_steps_break_even(Evaluator& e, double allreduce_s) {
  const LocalSgdOptions saved = e.setup().local_sgd;
  LocalSgdOptions o = saved;
  const int lowest = o.sync == OuterSync::streaming ? o.fragments * o.overlap_steps : 1;
  const auto faster_at = [&](int h) {
    o.inner_steps = h;
    e.set_local_sgd(o);
    return low_communication_advantage(e, e.setup().cluster, allreduce_s).value_or(-1.0) > 0.0;
  };
  BreakEven out;
  out.range_low = lowest;
  out.range_high = kMaxSearchInnerSteps;
  if (faster_at(lowest)) {
    out.outcome = BreakEven::Outcome::always_faster;
  } else {
    int low = lowest;
    int high = 0;
    for (int h = std::max(2, lowest * 2); h <= kMaxSearchInnerSteps; h *= 2) {
      if (faster_at(h)) {
        high = h;
        break;
      }
      low = h;
    }
    if (high == 0) {
      out.outcome = BreakEven::Outcome::always_slower;
    } else {
      while (high - low > 1) {
        const int mid = low + (high - low) / 2;
        (faster_at(mid) ? high : low) = mid;
      }
      out.outcome = BreakEven::Outcome::crosses;
      out.value = high;
      out.last_below = low;
      out.faster_below = false;
    }
  }
  e.set_local_sgd(saved);
  return out;
}

std::optional<LowCommunication> low_communication(Evaluator& e, const SchemeOutcome& allreduce) {
  const ClusterProfile& cluster = e.setup().cluster;
  if (local_sgd_unavailable(e.setup().local_sgd, cluster.nodes) || e.setup().variability.any()) return std::nullopt;
  LowCommunication l;
  l.diloco = e.evaluate(Scheme::diloco());
  l.local_sgd = e.evaluate(Scheme::local_sgd());
  l.speedup = allreduce.iteration.iteration_s / l.diloco.iteration.iteration_s;
  l.inner_steps = inner_steps_break_even(e, allreduce.iteration.iteration_s);
  const auto advantage_on = [&](const ClusterProfile& c) {
    return low_communication_advantage(e, c, e.evaluate_on(c, Scheme::allreduce()).iteration.iteration_s);
  };
  // DiLoCo wins where All-Reduce takes longer than it, whichever the rate.
  const auto verdict_on = [&](const ClusterProfile& c) {
    RateVerdict v;
    v.allreduce_s = e.evaluate_on(c, Scheme::allreduce()).iteration.iteration_s;
    const SchemeOutcome o = e.evaluate_on(c, Scheme::diloco());
    if (!runnable(o)) return v;
    v.faster = v.allreduce_s / o.iteration.iteration_s - 1.0 > 0.0;
    v.alternative_s = o.iteration.iteration_s;
    v.alternative = "diloco";
    return v;
  };
  l.bandwidth = rate_break_even(e, verdict_on, advantage_on, RateScan::bounded);
  return l;
}

BreakEven node_break_even(Evaluator& e, const std::string& first, const std::function<void(int)>& at_nodes) {
  ClusterProfile cluster = e.setup().cluster;
  const auto advantage_at = [&](int nodes) {
    at_nodes(nodes);
    cluster.nodes = nodes;
    return topology_wins_on(e, cluster, first);
  };
  BreakEven out;
  out.range_low = 1;
  out.range_high = kMaxNodes;
  std::optional<int> previous_nodes;
  bool previous = false;
  for (int nodes = 1; nodes <= kMaxNodes; nodes *= 2) {
    const auto now = advantage_at(nodes);
    if (!now) continue;
    if (previous_nodes && previous != *now) {
      int low = *previous_nodes;  // same sign as `previous`
      int high = nodes;
      while (high - low > 1) {
        const int mid = low + (high - low) / 2;
        const auto at_mid = advantage_at(mid);
        if (!at_mid) break;  // no topology fits in between: keep the bracket
        (*at_mid == previous ? low : high) = mid;
      }
      out.outcome = BreakEven::Outcome::crosses;
      out.value = high;
      out.last_below = low;
      out.faster_below = previous;
      return out;
    }
    previous_nodes = nodes;
    previous = *now;
  }
  if (!previous_nodes) {
    out.why = BreakEven::Why::no_topology;
    return out;
  }
  out.outcome = previous ? BreakEven::Outcome::always_faster : BreakEven::Outcome::always_slower;
  return out;
}

constexpr int kSearchIterations = 200;

// The break-even compute CV simulates every rank, of All-Reduce and of the best topology,
// at several CVs: each simulated iteration costs about ranks x (All-Reduce's buckets +
// the topology's). Measured on one core of the 2-core development VM, ResNet-50 on
// DGX H100s (5 + 4 buckets): 131,072 GPUs (1.18 M rank-buckets) took 7 s of search,
// 1,048,576 GPUs (9.4 M) 107 s; GPT-2 XL on 1,024 GPUs (145 + 145 buckets, 0.3 M) 0.7 s.
// Beyond this many rank-buckets the search is not run and the report says so (about 10 s
// there).
constexpr double kMaxSearchRankBuckets = 2'097'152.0;  // 2^21
// The NIC-rate scan with variable compute simulates All-Reduce and the best topology at up
// to 41 rates and then its narrowing: about five times the CV search's count. ResNet-50 on
// 131,072 GPUs (1.18 M rank-buckets) took 8 s of scan at the searches' 20 iterations and
// warm-up of 20 (`advise --compute-cv 0.1 --sim-iterations 20`, 2026-11-29), GPT-2 XL on
// 1,024 GPUs (0.3 M) 1.7 s. A fifth of the CV search's limit, 2^19, keeps it within a few
// seconds; beyond, it is not run and the report says so.
constexpr double kMaxRateSearchRankBuckets = 524'288.0;  // 2^19

// Runs `f` with the variable-compute simulation shortened for searches, then restores it.
template <typename F>
auto with_short_simulations(Evaluator& e, F&& f) {
  const Variability saved = e.setup().variability;
  Variability quick = saved;
  quick.iterations = std::min(saved.iterations, kSearchIterations);
  quick.warmup_iterations = std::min(saved.warmup_iterations, kSearchIterations / 10);
  e.set_variability(quick);
  auto result = f();
  e.set_variability(saved);
  return result;
}

BreakEven variability_break_even(Evaluator& e, const Scheme& best) {
  const Variability saved = e.setup().variability;
  Variability v = saved;
  v.law = saved.law == NoiseLaw::lognormal ? NoiseLaw::lognormal : NoiseLaw::normal;
  v.empirical_factors.clear();
  v.iterations = std::min(saved.iterations, kSearchIterations);
  v.warmup_iterations = std::min(saved.warmup_iterations, kSearchIterations / 10);
  const auto advantage_at = [&](double cv) {
    v.cv = cv;
    e.set_variability(v);
    return e.evaluate(Scheme::allreduce()).iteration.iteration_s / e.evaluate(best).iteration.iteration_s - 1.0;
  };
  BreakEven out;
  out.range_low = 0.0;
  out.range_high = 1.0;
  const double at_zero = advantage_at(0.0);
  const double at_one = advantage_at(1.0);
  if ((at_zero > 0.0) == (at_one > 0.0)) {
    out.outcome = at_zero > 0.0 ? BreakEven::Outcome::always_faster : BreakEven::Outcome::always_slower;
  } else {
    // The search reads the advantage's values (crossing.hpp): 5-8 evaluations where the
    // advantage is near linear in the CV, never more than one beyond bisection's 14.
    const CrossingBracket crossing = narrow_crossing(advantage_at, 0.0, at_zero, 1.0, at_one, kCvTolerance);
    out.outcome = BreakEven::Outcome::crosses;
    out.value = crossing.midpoint();
    out.faster_below = at_zero > 0.0;
  }
  e.set_variability(saved);
  return out;
}

std::vector<Caveat> caveats(Evaluator& e, const Advice& a) {
  std::vector<Caveat> out;
  const Setup& s = e.setup();
  const auto add = [&](Caveat::Kind kind) -> Caveat& {
    out.push_back(Caveat{});
    out.back().kind = kind;
    return out.back();
  };
  if (a.best) {
    const MixingQuality& q = e.setup_mixing(a.best->scheme.topology);
    Caveat& consensus = add(Caveat::Kind::consensus);
    consensus.topology = a.best->scheme.topology;
    consensus.spectral_gap = q.spectral_gap;
    consensus.exact_average_per_period = q.exact_average_per_period;
    const ComputeRequest request = compute_request(*s.model, s.workload, s.cluster.ranks());
    Caveat& batch = add(Caveat::Kind::local_batch);
    batch.batch_per_gpu = request.batch_per_gpu;
    batch.sample_unit = s.model->sample_unit;
    batch.small_batch = request.batch_per_gpu < s.model->default_batch_per_gpu;
  }
  for (const SchemeOutcome& c : a.candidates) {
    if (!c.available) add(Caveat::Kind::not_applicable).reason = c.unavailable_reason;
  }
  // One caveat per memory need (to 0.1 GiB) listing the schemes that have it: every
  // replica scheme usually needs the same.
  const std::size_t first_memory_caveat = out.size();
  const auto too_big = [&](const SchemeOutcome& o) {
    if (!o.available || o.memory.fits()) return;
    const double need_gib = gib_to_a_tenth(o.memory.total_bytes());
    for (std::size_t i = first_memory_caveat; i < out.size(); ++i) {
      if (gib_to_a_tenth(out[i].memory_bytes) == need_gib) {
        out[i].schemes.push_back(o.scheme.name());
        return;
      }
    }
    Caveat& c = add(Caveat::Kind::does_not_fit);
    c.schemes = {o.scheme.name()};
    c.memory_bytes = o.memory.total_bytes();
    c.capacity_bytes = o.memory.capacity_bytes;
  };
  too_big(a.allreduce);
  for (const SchemeOutcome& c : a.candidates) too_big(c);
  if (a.allreduce.variability && s.variability.persistent()) {
    const VariabilityOutcome& v = *a.allreduce.variability;
    Caveat& straggler = add(Caveat::Kind::straggler);
    straggler.straggler_rank = v.straggler_rank;
    straggler.idle_min_s = v.idle_min_s;
    straggler.idle_max_s = v.idle_max_s;
  }
  if (a.allreduce.iteration.exposed_comm_s < 0.02 * a.allreduce.iteration.iteration_s) {
    add(Caveat::Kind::network_not_bottleneck);
  }
  for (const FactorShare& f : a.factors) {
    if (f.factor == Factor::overlap && f.share > 0.5 && a.speedup > 1.0) add(Caveat::Kind::gain_from_overlap);
  }
  return out;
}

// How many evaluations (each of All-Reduce and the best topology) the break-even compute-CV
// search is priced at in advise's budget: its two ends and the narrowing's evaluations
// where the advantage is near linear in the CV (crossing.hpp: 5-8 in all; 6 measured on
// ResNet-50 at 131,072 GPUs and on GPT-2 XL at 1,024, 2026-11-30). Where the advantage
// bends the narrowing may take up to 15 (bisection's 14 and one), beyond the price.
constexpr int kCvSearchPricedEvaluations = 8;

// A command's simulations of every rank under variable compute, as the reference core
// would take them (SimulationWork::estimated_s, each simulation's work planned by
// Evaluator::plan at the setup's iterations): each of `schemes` once, then All-Reduce and
// the dearest Decent-DP topology among them `attribution` more times each (advise's factor
// attribution runs All-Reduce and the best topology three more times; the best is not
// known before), and, with `cv_search`, advise's break-even compute-CV search: the same
// two kCvSearchPricedEvaluations times at its shortened iterations (kSearchIterations),
// where its limit lets it run. Beyond limits::kMaxCommandSimulationS the command is
// refused before anything is simulated, naming the most iterations that fit. Not priced:
// the node and NIC-rate searches (at most 1,024 nodes; the rate scan only below 2^19
// rank-buckets) and the schedules' planning.
void check_simulation_budget(Evaluator& e, const std::vector<Scheme>& schemes, int attribution = 0,
                             bool cv_search = false) {
  const Variability& v = e.setup().variability;
  if (!v.any()) return;
  struct Priced {
    double each_s = 0.0;  // one simulated iteration
    double warmup = 0.0;  // iterations
    double period = 1.0;
    double times = 1.0;
    bool runs = false;  // false: refused for its own size (available no longer), not at these iterations
    double most_iterations = std::numeric_limits<double>::infinity();  // a search's shortened run
    double buckets = 0.0;
    double ranks = 0.0;
  };
  std::vector<Priced> priced;
  std::optional<Priced> allreduce;
  std::optional<Priced> dearest;
  for (const Scheme& scheme : schemes) {
    const SchemeOutcome o = e.plan(scheme);
    if (!o.simulation_work) continue;
    const SimulationWork& w = *o.simulation_work;
    const Priced p{w.estimated_s_per_iteration(), w.iterations - w.measured_iterations,
                   static_cast<double>(w.period), 1.0, o.available, std::numeric_limits<double>::infinity(),
                   w.buckets, w.ranks};
    priced.push_back(p);
    if (scheme.kind == Scheme::Kind::allreduce) allreduce = p;
    if (scheme.kind == Scheme::Kind::gossip && scheme.topology != "complete" && (!dearest || p.each_s > dearest->each_s)) {
      dearest = p;
    }
  }
  for (std::optional<Priced> p : {allreduce, dearest}) {
    if (attribution == 0 || !p) continue;
    p->times = attribution;
    priced.push_back(*p);
  }
  // The CV search runs where ranks x (All-Reduce's buckets + the topology's) is within its
  // limit (the dearest topology's buckets standing for the best's).
  if (cv_search && allreduce && dearest &&
      allreduce->ranks * (allreduce->buckets + dearest->buckets) <= kMaxSearchRankBuckets) {
    for (Priced p : {*allreduce, *dearest}) {
      p.times = kCvSearchPricedEvaluations;
      p.most_iterations = kSearchIterations;
      // Its warm-up is shortened too, unless a topology's settling set it (gossip.cpp,
      // variable_warmup_iterations: never shorter than the deterministic run's settling).
      if (p.warmup <= v.warmup_iterations) p.warmup = std::min(p.warmup, static_cast<double>(kSearchIterations / 10));
      priced.push_back(p);
    }
  }
  // At `iterations` measured: each run rounds them up to whole periods beside its warm-up.
  const auto estimate_s = [&](double iterations, bool every) {
    double total_s = 0.0;
    for (const Priced& p : priced) {
      const double measured = std::min(iterations, p.most_iterations);
      if (every || p.runs) total_s += p.times * p.each_s * (std::ceil(measured / p.period) * p.period + p.warmup);
    }
    return total_s;
  };
  const double total_s = estimate_s(v.iterations, false);
  if (total_s <= limits::kMaxCommandSimulationS) return;
  // The most iterations at which every simulation, the ones refused now included, fits.
  double low = 0.0;
  double high = v.iterations;
  while (high - low > 1.0) {
    const double mid = std::floor(0.5 * (low + high));
    (estimate_s(mid, true) <= limits::kMaxCommandSimulationS ? low : high) = mid;
  }
  const ClusterProfile& cluster = e.setup().cluster;
  const std::string advice =
      low >= 1.0 && estimate_s(low, true) <= limits::kMaxCommandSimulationS
          ? fmt::format("simulate at most {:.0f} iterations here, or fewer GPUs, or predict one scheme", low)
          : std::string("give fewer GPUs, or predict one scheme");
  throw InputError::in_input(
      "sim-iterations",
      fmt::format("variable compute on {} x {} GPUs would simulate every rank of each scheme for about {:.0f} s in all "
                  "(estimated on one core of the reference machine), beyond the limit of {:g} s for one command "
                  "(docs/MANUAL.md, \"Limits\"): {}",
                  cluster.nodes, cluster.gpus_per_node, total_s, limits::kMaxCommandSimulationS, advice));
}

// compare_schemes' list: (scheme, whether it is a Decent-DP topology, whose spectral gap a
// comparison asks for).
std::vector<std::pair<Scheme, bool>> compared_schemes() {
  std::vector<std::pair<Scheme, bool>> schemes{{Scheme::allreduce(), false}, {Scheme::gossip("complete"), true}};
  for (const Scheme& scheme : decentdp_schemes()) schemes.emplace_back(scheme, true);
  for (const Scheme& scheme : whole_model_gossip_schemes()) schemes.emplace_back(scheme, false);
  for (const Sharding s : kShardings) schemes.emplace_back(Scheme::sharded(s), false);
  schemes.emplace_back(Scheme::local_sgd(), false);
  schemes.emplace_back(Scheme::diloco(), false);
  return schemes;
}

}  // namespace

BreakEven bandwidth_break_even(Evaluator& e, const std::string& first_topology, RateScan scan) {
  return rate_break_even(
      e, [&](const ClusterProfile& cluster) { return topology_verdict_on(e, cluster, first_topology); },
      [&](const ClusterProfile& cluster) { return topology_advantage_on(e, cluster); }, scan);
}

std::vector<SchemeOutcome> compare_schemes(Evaluator& evaluator, bool with_mixing, const AdviceProgress& progress) {
  const std::vector<std::pair<Scheme, bool>> schemes = compared_schemes();
  std::vector<Scheme> simulated;
  for (const auto& [scheme, decentdp] : schemes) simulated.push_back(scheme);
  check_simulation_budget(evaluator, simulated);
  std::vector<SchemeOutcome> out;
  for (std::size_t i = 0; i < schemes.size(); ++i) {
    const auto& [scheme, decentdp] = schemes[i];
    if (progress) progress(fmt::format("{} ({} of {} schemes)", scheme.name(), i + 1, schemes.size()).c_str());
    out.push_back(decentdp ? evaluator.evaluate(scheme, {}, with_mixing) : evaluator.evaluate(scheme));
  }
  return out;
}

std::vector<const SchemeOutcome*> tied_with_best(const Advice& a) {
  std::vector<const SchemeOutcome*> out;
  if (!a.best) return out;
  // The window choose() picked from: within kComparableSpeed of the fastest.
  double fastest_s = a.best->iteration.iteration_s;
  for (const SchemeOutcome& o : a.candidates) {
    if (runnable(o)) fastest_s = std::min(fastest_s, o.iteration.iteration_s);
  }
  for (const SchemeOutcome& o : a.candidates) {
    const bool close = o.iteration.iteration_s <= kComparableSpeed * fastest_s;
    if (runnable(o) && close && o.scheme.name() != a.best->scheme.name()) out.push_back(&o);
  }
  return out;
}

// Among the topologies within kComparableSpeed of the fastest (closer than the model can
// tell apart), the one that mixes best: its replicas agree sooner for the same time.
std::optional<SchemeOutcome> choose(Evaluator& e, const std::vector<SchemeOutcome>& candidates) {
  std::optional<SchemeOutcome> fastest;
  for (const SchemeOutcome& o : candidates) {
    if (runnable(o) && (!fastest || better(o, *fastest))) fastest = o;
  }
  if (!fastest) return fastest;
  std::optional<SchemeOutcome> chosen;
  double chosen_gap = -1.0;
  for (const SchemeOutcome& o : candidates) {
    if (!runnable(o) || o.iteration.iteration_s > kComparableSpeed * fastest->iteration.iteration_s) {
      continue;
    }
    const double gap = e.setup_mixing(o.scheme.topology).spectral_gap;
    if (gap > chosen_gap + 1e-12) {
      chosen = o;
      chosen_gap = gap;
    }
  }
  return chosen;
}

Advice advise(Evaluator& e, const AdviceProgress& progress) {
  const auto step = [&](const char* what) {
    if (progress) progress(what);
  };
  Advice a;
  // With variable compute, All-Reduce first without it (memory does not depend on it):
  // when no replicated scheme fits, nothing is ranked, and every replicated scheme is
  // predicted without it, for reference, rather than simulating ranks that cannot run.
  Factors deterministic;
  deterministic.variable_compute = false;
  a.allreduce = e.evaluate(Scheme::allreduce(), deterministic);
  const bool variable = e.setup().variability.any();
  if (variable && !a.allreduce.memory.fits()) {
    const auto fits = [&](const Scheme& scheme) { return runnable(e.evaluate(scheme, deterministic)); };
    const std::vector<Scheme> others = decentdp_schemes();
    a.unfit_without_variability = std::none_of(others.begin(), others.end(), fits);
  }
  const Factors factors = a.unfit_without_variability ? deterministic : Factors{};
  if (variable && !a.unfit_without_variability) {
    // Every scheme below, the factor attribution (three more of All-Reduce and of the best
    // topology) and the compute-CV search. The searches run shortened simulations and are
    // held to their own limits too (kMaxRateSearchRankBuckets, kMaxSearchRankBuckets; the
    // node search at up to 1,024 nodes).
    std::vector<Scheme> simulated{Scheme::allreduce(), Scheme::gossip("complete")};
    for (const Scheme& scheme : decentdp_schemes()) simulated.push_back(scheme);
    for (const Scheme& scheme : whole_model_gossip_schemes()) simulated.push_back(scheme);
    check_simulation_budget(e, simulated, 3, true);
  }
  // The budget's refusal, if any, comes before the first progress line (it is one line).
  step("every scheme");
  if (variable && !a.unfit_without_variability) {
    a.allreduce = e.evaluate(Scheme::allreduce());
  }
  for (const Scheme& scheme : decentdp_schemes()) a.candidates.push_back(e.evaluate(scheme, factors));
  a.best = choose(e, a.candidates);
  for (const Scheme& scheme : whole_model_gossip_schemes()) {
    a.whole_model_gossip.push_back(e.evaluate(scheme, factors));
  }
  // The complete topology, one of the candidates above with the same factors (before
  // their mixing is filled in below): the same outcome, not simulated twice.
  const auto complete = std::find_if(a.candidates.begin(), a.candidates.end(),
                                     [](const SchemeOutcome& c) { return c.scheme == Scheme::gossip("complete"); });
  a.parameter_allreduce = complete != a.candidates.end() ? *complete : e.evaluate(Scheme::gossip("complete"), factors);
  if (a.best) {
    a.best->mixing = e.setup_mixing(a.best->scheme.topology);
    for (SchemeOutcome& c : a.candidates) {
      if (runnable(c)) c.mixing = e.setup_mixing(c.scheme.topology);  // cached per topology
    }
    a.speedup = a.allreduce.iteration.iteration_s / a.best->iteration.iteration_s;
    step("what each factor contributes");
    a.factors = attribute(e, a.allreduce, *a.best);
  }
  if (!a.allreduce.memory.fits()) {
    a.sharded_without_variability = e.setup().variability.any();
    for (const Sharding sharding : kShardings) {
      SchemeOutcome o = e.evaluate(Scheme::sharded(sharding), deterministic);
      if (runnable(o) && (!a.sharded_alternative || better(o, *a.sharded_alternative))) {
        a.sharded_alternative = std::move(o);
      }
    }
  }
  a.verdict = !a.best && !a.allreduce.memory.fits()     ? Verdict::does_not_fit
              : !a.best || a.speedup <= 1.0 / kVerdictMargin ? Verdict::stay_with_allreduce
              : a.speedup >= kVerdictMargin                  ? Verdict::decentralize
                                                             : Verdict::no_clear_winner;
  if (a.verdict == Verdict::does_not_fit) {
    // Nothing replicated runs at this size: no break-even to search, and local SGD and
    // DiLoCo keep a whole replica and more.
    a.bandwidth.why = a.nodes.why = BreakEven::Why::does_not_fit;
    a.caveats = caveats(e, a);
    return a;
  }
  // The searches simulate every rank of All-Reduce and of the best topology at each point
  // (the NIC-rate and node searches with variable compute, the CV search always): each of
  // their iterations costs about this many rank-buckets. Beyond a search's limit it is not
  // run, and the report says so.
  const double rank_buckets =
      a.best ? static_cast<double>(e.setup().cluster.ranks()) * (a.allreduce.iteration.buckets + a.best->iteration.buckets)
             : 0.0;
  const auto too_large = [&](BreakEven& b, double limit) {
    b.why = BreakEven::Why::too_large;
    b.simulated = rank_buckets;
    b.simulated_limit = limit;
  };
  const std::string first = a.best ? a.best->scheme.topology : "";
  if (variable && rank_buckets > kMaxRateSearchRankBuckets) {
    too_large(a.bandwidth, kMaxRateSearchRankBuckets);
  } else {
    step("the break-even NIC rate");
    a.bandwidth = with_short_simulations(e, [&] { return bandwidth_break_even(e, first); });
  }
  step("the break-even node count");
  std::string at_nodes;
  a.nodes = with_short_simulations(e, [&] {
    return node_break_even(e, first, [&](int nodes) {
      at_nodes = fmt::format("the break-even node count: {} nodes", nodes);
      step(at_nodes.c_str());
    });
  });
  if (a.best) {
    a.variability_law = e.setup().variability.law == NoiseLaw::lognormal ? NoiseLaw::lognormal : NoiseLaw::normal;
    if (rank_buckets > kMaxSearchRankBuckets) {
      too_large(a.variability, kMaxSearchRankBuckets);
    } else {
      step("the break-even compute variability");
      a.variability = variability_break_even(e, a.best->scheme);
    }
  }
  step("low-communication training");
  a.low_communication = low_communication(e, a.allreduce);
  a.caveats = caveats(e, a);
  return a;
}

}  // namespace dtperf
