#include "dtperf/advice.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>

#include <fmt/format.h>

namespace dtperf {

namespace {

constexpr double kMinGbps = 0.1;
constexpr double kMaxGbps = 10000.0;
constexpr int kGbpsScanPoints = 41;
constexpr int kMaxNodes = 1024;

// Faster wins; within 0.1 % (the model cannot tell them apart) the one that puts fewer
// bytes through the NICs wins, then the earlier in the list.
bool better(const SchemeOutcome& a, const SchemeOutcome& b) {
  const double ta = a.iteration.iteration_s;
  const double tb = b.iteration.iteration_s;
  if (std::abs(ta - tb) > 1e-3 * std::min(ta, tb)) return ta < tb;
  return a.iteration.inter_bytes_per_node < b.iteration.inter_bytes_per_node;
}

std::vector<Scheme> decentdp_schemes() {
  std::vector<Scheme> out;
  for (const TopologyInfo& t : topologies()) out.push_back(Scheme::gossip(t.name));
  return out;
}

// The fastest available Decent-DP topology on `cluster`, or nullopt.
std::optional<SchemeOutcome> best_on(Evaluator& e, const ClusterProfile& cluster, const Factors& factors = {}) {
  std::optional<SchemeOutcome> best;
  for (const Scheme& scheme : decentdp_schemes()) {
    SchemeOutcome o = e.evaluate_on(cluster, scheme, factors);
    if (o.available && (!best || better(o, *best))) best = std::move(o);
  }
  return best;
}

// Speedup of the best topology over All-Reduce minus one; nullopt if none applies.
std::optional<double> advantage_on(Evaluator& e, const ClusterProfile& cluster) {
  const auto best = best_on(e, cluster);
  if (!best) return std::nullopt;
  return e.evaluate_on(cluster, Scheme::allreduce()).iteration.iteration_s / best->iteration.iteration_s - 1.0;
}

std::vector<FactorShare> attribute(Evaluator& e, const Scheme& best) {
  // G(S): the gain with exactly the factors in S switched on (bit 0 overlap, bit 1
  // heterogeneous links, bit 2 variable compute).
  std::array<double, 8> gain{};
  for (int mask = 0; mask < 8; ++mask) {
    const Factors f{(mask & 1) != 0, (mask & 2) != 0, (mask & 4) != 0};
    gain[static_cast<std::size_t>(mask)] =
        e.evaluate(Scheme::allreduce(), f).iteration.iteration_s - e.evaluate(best, f).iteration.iteration_s;
  }
  // Shapley weights for three players: |S| = 0 -> 1/3, 1 -> 1/6, 2 -> 1/3.
  const double weight[3] = {1.0 / 3.0, 1.0 / 6.0, 1.0 / 3.0};
  const char* names[3] = {"overlap", "heterogeneous links", "variable compute"};
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
  shares.push_back({"other", gain[0], total != 0.0 ? gain[0] / total : 0.0});
  return shares;
}

BreakEven bandwidth_break_even(Evaluator& e) {
  ClusterProfile cluster = e.setup().cluster;
  const auto advantage_at = [&](double gbps) {
    cluster.inter.nic_gbps = gbps;
    return advantage_on(e, cluster);
  };
  BreakEven out;
  if (cluster.nodes < 2) {
    out.description = "one node: the inter-node rate plays no part";
    return out;
  }
  const double step = std::pow(kMaxGbps / kMinGbps, 1.0 / (kGbpsScanPoints - 1));
  double previous_gbps = kMinGbps;
  const auto first = advantage_at(kMinGbps);
  if (!first) {
    out.description = "no topology fits this cluster";
    return out;
  }
  double previous = *first;
  for (int i = 1; i < kGbpsScanPoints; ++i) {
    const double gbps = kMinGbps * std::pow(step, i);
    const double now = advantage_at(gbps).value_or(previous);
    if ((previous > 0.0) != (now > 0.0)) {
      double low = previous_gbps;
      double high = gbps;
      for (int k = 0; k < 40; ++k) {
        const double mid = std::sqrt(low * high);
        ((advantage_at(mid).value_or(0.0) > 0.0) == (previous > 0.0) ? low : high) = mid;
      }
      out.found = true;
      out.value = std::sqrt(low * high);
      out.description = fmt::format("decentralized training is {} below {:.3g} Gbit/s per NIC and {} above",
                                    previous > 0.0 ? "faster" : "slower", out.value, previous > 0.0 ? "slower" : "faster");
      return out;
    }
    previous = now;
    previous_gbps = gbps;
  }
  out.description = fmt::format("decentralized training is {} at every rate from {:g} to {:g} Gbit/s per NIC",
                                 previous > 0.0 ? "faster" : "slower", kMinGbps, kMaxGbps);
  return out;
}

BreakEven node_break_even(Evaluator& e) {
  ClusterProfile cluster = e.setup().cluster;
  const auto advantage_at = [&](int nodes) {
    cluster.nodes = nodes;
    return advantage_on(e, cluster);
  };
  BreakEven out;
  std::optional<int> previous_nodes;
  double previous = 0.0;
  for (int nodes = 1; nodes <= kMaxNodes; nodes *= 2) {
    const auto now = advantage_at(nodes);
    if (!now) continue;
    if (previous_nodes && (previous > 0.0) != (*now > 0.0)) {
      int low = *previous_nodes;  // same sign as `previous`
      int high = nodes;
      while (high - low > 1) {
        const int mid = low + (high - low) / 2;
        const auto at_mid = advantage_at(mid);
        if (!at_mid) break;  // no topology fits in between: keep the bracket
        ((*at_mid > 0.0) == (previous > 0.0) ? low : high) = mid;
      }
      out.found = true;
      out.value = high;
      out.description = fmt::format("decentralized training is {} from {} node{} on (up to {} it is {})",
                                    previous > 0.0 ? "slower" : "faster", high, high == 1 ? "" : "s", low,
                                    previous > 0.0 ? "faster" : "slower");
      return out;
    }
    previous_nodes = nodes;
    previous = *now;
  }
  out.description = previous_nodes ? fmt::format("decentralized training is {} at every size from 1 to {} nodes",
                                                 previous > 0.0 ? "faster" : "slower", kMaxNodes)
                                   : "no topology fits any size";
  return out;
}

constexpr int kSearchIterations = 200;

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
  const double at_zero = advantage_at(0.0);
  const double at_one = advantage_at(1.0);
  if ((at_zero > 0.0) == (at_one > 0.0)) {
    out.description = fmt::format("{} is {} than all-reduce at every compute CV from 0 to 100 % ({} law)", best.name(),
                                  at_zero > 0.0 ? "faster" : "slower", noise_law_name(v.law));
  } else {
    double low = 0.0;
    double high = 1.0;
    for (int k = 0; k < 30; ++k) {
      const double mid = 0.5 * (low + high);
      ((advantage_at(mid) > 0.0) == (at_zero > 0.0) ? low : high) = mid;
    }
    out.found = true;
    out.value = 0.5 * (low + high);
    out.description = fmt::format("{} is {} than all-reduce above a compute CV of {:.1f} % ({} law)", best.name(),
                                  at_zero > 0.0 ? "slower" : "faster", 100.0 * out.value, noise_law_name(v.law));
  }
  e.set_variability(saved);
  return out;
}

std::vector<std::string> caveats(Evaluator& e, const Advice& a) {
  std::vector<std::string> out;
  const Setup& s = e.setup();
  if (a.best) {
    const MixingQuality& q = e.mixing(a.best->scheme.topology, s.cluster.ranks(), s.cluster.gpus_per_node);
    std::string consensus = fmt::format(
        "Consensus: {} has a spectral gap of {:.3g} (All-Reduce: 1, an exact average every step); disagreement "
        "between replicas shrinks by about 1/e every {:.3g} steps",
        a.best->scheme.topology, q.spectral_gap, q.spectral_gap > 0.0 ? 1.0 / q.spectral_gap : INFINITY);
    if (q.exact_average_per_period) consensus += ", and the replicas agree exactly after each period";
    consensus += ". [DEC] measured equal or better accuracy than All-Reduce at a fixed iteration budget; check "
                 "convergence on your model before switching.";
    out.push_back(consensus);
    const ComputeRequest request = compute_request(*s.model, s.workload, s.cluster.ranks());
    const bool small_batch = request.batch_per_gpu < s.model->default_batch_per_gpu;
    out.push_back(fmt::format(
        "Local batch: {:g} {}s per GPU{}. [DEC] recommends accumulating over a window of 4-8 iterations "
        "(AccumAdam) when local batches are small, to tame the variance gossip adds.",
        request.batch_per_gpu, s.model->sample_unit, small_batch ? " is small" : ""));
  }
  for (const SchemeOutcome& c : a.candidates) {
    if (!c.available) out.push_back(fmt::format("Not applicable here: {}", c.unavailable_reason));
  }
  if (a.allreduce.variability && s.variability.persistent()) {
    const VariabilityOutcome& v = *a.allreduce.variability;
    out.push_back(fmt::format(
        "Straggler: rank {} waits least with all-reduce ({:.2f} ms per iteration, others up to {:.2f} ms): it "
        "is the slow one. A persistent straggler paces gossip too: groups stay within a few iterations of each "
        "other, so in the long run every rank runs at the slowest rank's pace; decentralization hides only "
        "variability that comes and goes. Replace or rebalance the slow hardware.",
        v.straggler_rank, v.idle_min_s * 1e3, v.idle_max_s * 1e3));
  }
  if (a.allreduce.iteration.exposed_comm_s < 0.02 * a.allreduce.iteration.iteration_s) {
    out.push_back("All-Reduce exposes less than 2 % of its iteration as communication: the network is not the "
                  "bottleneck here.");
  }
  for (const FactorShare& f : a.factors) {
    if (f.factor == "overlap" && f.share > 0.5 && a.speedup > 1.0) {
      out.push_back("Most of the gain comes from overlapping communication with the next iteration, not from "
                    "decentralization as such.");
    }
  }
  return out;
}

}  // namespace

std::vector<SchemeOutcome> compare_schemes(Evaluator& evaluator, bool with_mixing) {
  std::vector<SchemeOutcome> out{evaluator.evaluate(Scheme::allreduce())};
  for (const Scheme& scheme : decentdp_schemes()) out.push_back(evaluator.evaluate(scheme, {}, with_mixing));
  out.push_back(evaluator.evaluate(Scheme::sgp()));
  return out;
}

// Among the topologies within kComparableSpeed of the fastest (closer than the model can
// tell apart), the one that mixes best: its replicas agree sooner for the same time.
std::optional<SchemeOutcome> choose(Evaluator& e, const std::vector<SchemeOutcome>& candidates) {
  std::optional<SchemeOutcome> fastest;
  for (const SchemeOutcome& o : candidates) {
    if (o.available && (!fastest || better(o, *fastest))) fastest = o;
  }
  if (!fastest) return fastest;
  const ClusterProfile& c = e.setup().cluster;
  std::optional<SchemeOutcome> chosen;
  double chosen_gap = -1.0;
  for (const SchemeOutcome& o : candidates) {
    if (!o.available || o.iteration.iteration_s > kComparableSpeed * fastest->iteration.iteration_s) continue;
    const double gap = e.mixing(o.scheme.topology, c.ranks(), c.gpus_per_node).spectral_gap;
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
  step("every scheme");
  a.allreduce = e.evaluate(Scheme::allreduce());
  for (const Scheme& scheme : decentdp_schemes()) a.candidates.push_back(e.evaluate(scheme));
  a.best = choose(e, a.candidates);
  if (a.best) {
    a.best->mixing = e.mixing(a.best->scheme.topology, e.setup().cluster.ranks(), e.setup().cluster.gpus_per_node);
    a.speedup = a.allreduce.iteration.iteration_s / a.best->iteration.iteration_s;
    step("what each factor contributes");
    a.factors = attribute(e, a.best->scheme);
  }
  a.verdict = !a.best || a.speedup <= 1.0 / kVerdictMargin ? "stay with all-reduce"
              : a.speedup >= kVerdictMargin               ? "decentralize"
                                                          : "no clear winner";
  step("the break-even NIC rate");
  a.bandwidth = with_short_simulations(e, [&] { return bandwidth_break_even(e); });
  step("the break-even node count");
  a.nodes = with_short_simulations(e, [&] { return node_break_even(e); });
  if (a.best) {
    step("the break-even compute variability");
    a.variability = variability_break_even(e, a.best->scheme);
  }
  a.caveats = caveats(e, a);
  return a;
}

}  // namespace dtperf
