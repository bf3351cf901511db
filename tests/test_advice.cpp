// The advisor: anchoring reproduces a measurement, the factor shares add up to the gain,
// break-even points separate the two regimes, and the verdict follows the network.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dtperf/analysis/advice.hpp"
#include "dtperf/error.hpp"
#include "dtperf/io/profile_json.hpp"
#include "dtperf/io/render.hpp"
#include "dtperf/topology.hpp"
#include "dtperf/variability.hpp"
#include "dtperf/zoo.hpp"

using namespace dtperf;
using Catch::Matchers::WithinRel;

namespace {

const ModelSpec& transformer() {
  static const ModelSpec model = *zoo_model("transformer-base");
  return model;
}

Setup setup_on(int nodes, double nic_gbps) {
  Setup s;
  s.cluster = io::load_profile("a100x4-ib100");
  s.cluster.nodes = nodes;
  s.cluster.inter.nic_gbps = nic_gbps;
  s.model = &transformer();
  s.dtype = DType::fp16;
  s.workload.global_batch = 25000;
  return s;
}

}  // namespace

TEST_CASE("anchoring scales compute until the model reproduces the measurement", "[advice][anchor]") {
  Evaluator e(setup_on(8, 100));
  const double scale = e.fit_compute_scale(Scheme::allreduce(), 2, 73e-3);
  e.set_compute_scale(scale);
  ClusterProfile two_nodes = e.setup().cluster;
  two_nodes.nodes = 2;
  CHECK_THAT(e.evaluate_on(two_nodes, Scheme::allreduce()).iteration.iteration_s, WithinRel(73e-3, 1e-9));
  // A measurement the network alone cannot reach is refused.
  CHECK_THROWS_AS(e.fit_compute_scale(Scheme::allreduce(), 2, 1e-6), InputError);
}

TEST_CASE("factor shares add up to the gain over all-reduce", "[advice][factors]") {
  Evaluator e(setup_on(8, 25));
  const Advice a = advise(e);
  REQUIRE(a.best.has_value());
  double sum = 0.0;
  double shares = 0.0;
  for (const FactorShare& f : a.factors) {
    sum += f.seconds;
    shares += f.share;
  }
  CHECK_THAT(sum, WithinRel(a.allreduce.iteration.iteration_s - a.best->iteration.iteration_s, 1e-9));
  CHECK_THAT(shares, WithinRel(1.0, 1e-9));
  REQUIRE(a.factors.size() == 4);
  CHECK(a.factors[2].factor == Factor::variable_compute);
  CHECK(a.factors[2].seconds == 0.0);  // no variability in this scenario
  CHECK_THAT(a.speedup, WithinRel(a.allreduce.iteration.iteration_s / a.best->iteration.iteration_s, 1e-12));
}

TEST_CASE("the verdict follows the network", "[advice]") {
  // 10 Gbit/s NICs: All-Reduce of 244 MB per iteration dominates; gossip hides most of it.
  Evaluator slow(setup_on(8, 10));
  CHECK(advise(slow).verdict == Verdict::decentralize);
  // One node: NVLink only, nothing to gain.
  Evaluator one_node(setup_on(1, 100));
  const Advice a = advise(one_node);
  CHECK(a.verdict != Verdict::decentralize);
}

TEST_CASE("break-even points separate the two regimes", "[advice][break-even]") {
  Evaluator e(setup_on(8, 100));
  const Advice a = advise(e);
  REQUIRE(a.bandwidth.found());
  const auto advantage = [&](double gbps) {
    ClusterProfile c = e.setup().cluster;
    c.inter.nic_gbps = gbps;
    double best = 1e9;
    for (const TopologyInfo& t : topologies()) {
      const SchemeOutcome o = e.evaluate_on(c, Scheme::gossip(t.name));
      if (o.available) best = std::min(best, o.iteration.iteration_s);
    }
    return e.evaluate_on(c, Scheme::allreduce()).iteration.iteration_s / best - 1.0;
  };
  INFO("break-even at " << a.bandwidth.value << " Gbit/s per NIC");
  CHECK((advantage(a.bandwidth.value * 0.9) > 0.0) != (advantage(a.bandwidth.value * 1.1) > 0.0));
  // The search stops at a bracket of 1e-4 (relative) and answers its geometric middle, as
  // a bisection would: the sides differ 1e-4 either way of it.
  CHECK((advantage(a.bandwidth.value * (1.0 - 1e-4)) > 0.0) != (advantage(a.bandwidth.value * (1.0 + 1e-4)) > 0.0));
}

TEST_CASE("break-even searches that stop at the first topology faster than all-reduce find the full search's "
          "crossing", "[advice][break-even]") {
  // With variable compute (the searches' own 200 iterations, so every prediction here is
  // the one the search made): just below and above the NIC rate found, every topology
  // predicted, the best of them against All-Reduce changes side; likewise around the node
  // count found.
  Setup s = setup_on(8, 100);
  s.variability.law = NoiseLaw::normal;
  s.variability.cv = 0.02;  // small enough for All-Reduce to win on fast NICs
  s.variability.iterations = 200;
  s.variability.warmup_iterations = 20;
  Evaluator e(s);
  const Advice a = advise(e);
  const auto advantage = [&](const ClusterProfile& c) {
    // The advisor's best: the fastest, except that within 0.1 % (closer than the model
    // tells apart) the one with fewer bytes through the NICs.
    std::optional<SchemeOutcome> best;
    for (const TopologyInfo& t : topologies()) {
      const SchemeOutcome o = e.evaluate_on(c, Scheme::gossip(t.name));
      if (!t.gossip || !o.available || !o.memory.fits()) continue;
      const double ta = o.iteration.iteration_s;
      const double tb = best ? best->iteration.iteration_s : 1e9;
      const bool tie = std::abs(ta - tb) <= 1e-3 * std::min(ta, tb);
      if (!best || (tie ? o.iteration.inter_bytes_per_node < best->iteration.inter_bytes_per_node : ta < tb)) best = o;
    }
    return e.evaluate_on(c, Scheme::allreduce()).iteration.iteration_s / best->iteration.iteration_s - 1.0;
  };
  REQUIRE(a.bandwidth.found());
  INFO("break-even at " << a.bandwidth.value << " Gbit/s per NIC");
  ClusterProfile below = s.cluster;
  ClusterProfile above = s.cluster;
  below.inter.nic_gbps = a.bandwidth.value * (1.0 - 1e-3);
  above.inter.nic_gbps = a.bandwidth.value * (1.0 + 1e-3);
  CHECK((advantage(below) > 0.0) == a.bandwidth.faster_below);
  CHECK((advantage(above) > 0.0) != a.bandwidth.faster_below);
  if (a.nodes.found()) {
    INFO("node break-even at " << a.nodes.value);
    below = above = s.cluster;
    below.nodes = static_cast<int>(a.nodes.last_below);
    above.nodes = static_cast<int>(a.nodes.value);
    CHECK((advantage(below) > 0.0) == a.nodes.faster_below);
    CHECK((advantage(above) > 0.0) != a.nodes.faster_below);
  }
}

TEST_CASE("the bounded NIC rate scan finds what evaluating every rate of the grid finds", "[advice][break-even]") {
  // The bounded scan settles runs of rates from two evaluated ones (a time never rises with
  // the rate, nor falls faster than 1 / rate); the reference evaluates all 41. Same outcome, same side, same rate to the
  // last bit: the same bracket is narrowed by the same evaluations. Cases: crossings with
  // and without variable compute, on 2 to 8 nodes, with the first topology tried the
  // winner or not; and decentralized faster at every rate (32 nodes, CV 5 %).
  struct Case {
    int nodes;
    double nic_gbps;
    double cv;
    const char* first;
  };
  const Case cases[] = {{8, 100, 0.0, "one-peer-exp"},    {8, 100, 0.02, "one-peer-exp"}, {2, 25, 0.0, "ring"},
                        {32, 10, 0.05, "alternating-exp-ring"}, {4, 1600, 0.0, "complete"}};
  int crossings = 0;
  for (const Case& c : cases) {
    Setup s = setup_on(c.nodes, c.nic_gbps);
    if (c.cv > 0.0) {
      s.variability.law = NoiseLaw::normal;
      s.variability.cv = c.cv;
      s.variability.iterations = 200;
      s.variability.warmup_iterations = 20;
    }
    Evaluator e(s);
    const std::uint64_t before = e.evaluations();
    const BreakEven bounded = bandwidth_break_even(e, c.first, RateScan::bounded);
    const std::uint64_t bounded_evaluations = e.evaluations() - before;
    const BreakEven every = bandwidth_break_even(e, c.first, RateScan::every_rate);
    const std::uint64_t every_evaluations = e.evaluations() - before - bounded_evaluations;
    INFO(c.nodes << " nodes, " << c.nic_gbps << " Gbit/s, CV " << c.cv << ": bounded " << bounded.value << " ("
                 << bounded_evaluations << " evaluations), every rate " << every.value << " (" << every_evaluations
                 << ")");
    CHECK(bounded_evaluations < every_evaluations);
    CHECK(bounded.outcome == every.outcome);
    CHECK(bounded.faster_below == every.faster_below);
    CHECK(bounded.value == every.value);
    crossings += every.found() ? 1 : 0;
  }
  CHECK(crossings >= 2);  // the cases include crossings, not only one-sided answers
}

TEST_CASE("the break-even compute CV is what bisection of the same advantage finds, within its tolerance",
          "[advice][break-even][crossing]") {
  // The search reads the advantage's values (crossing.hpp); bisection, which it replaced,
  // reads only their signs. Both stop at a bracket of 1e-4 in CV. On NICs this fast
  // All-Reduce wins without variable compute and loses above a CV of a few percent.
  Setup s = setup_on(8, 1600);
  s.variability.law = NoiseLaw::normal;
  s.variability.cv = 0.02;
  s.variability.iterations = 200;  // the searches' own length, so the predictions are theirs
  s.variability.warmup_iterations = 20;
  Evaluator e(s);
  const Advice a = advise(e);
  REQUIRE(a.best);
  REQUIRE(a.variability.found());
  Variability v = s.variability;
  const auto advantage = [&](double cv) {
    v.cv = cv;
    e.set_variability(v);
    return e.evaluate(Scheme::allreduce()).iteration.iteration_s / e.evaluate(a.best->scheme).iteration.iteration_s -
           1.0;
  };
  const bool low_side = advantage(0.0) > 0.0;
  double low = 0.0;
  double high = 1.0;
  int bisections = 0;
  while (high - low > 1e-4) {
    const double mid = 0.5 * (low + high);
    ((advantage(mid) > 0.0) == low_side ? low : high) = mid;
    ++bisections;
  }
  INFO("search " << a.variability.value << ", bisection " << 0.5 * (low + high) << " after " << bisections
                 << " evaluations");
  CHECK(bisections == 14);
  CHECK(std::abs(a.variability.value - 0.5 * (low + high)) <= 1e-4);
}

TEST_CASE("compare reports each scheme as it starts, for progress", "[advice]") {
  Evaluator e(setup_on(2, 100));
  std::vector<std::string> steps;
  const std::vector<SchemeOutcome> all = compare_schemes(e, true, [&](const char* step) { steps.emplace_back(step); });
  REQUIRE(steps.size() == all.size());
  CHECK(steps.front() == "all-reduce (1 of " + std::to_string(all.size()) + " schemes)");
  CHECK(steps.back() == "diloco (" + std::to_string(all.size()) + " of " + std::to_string(all.size()) + " schemes)");
}

TEST_CASE("compare lists every topology, with the reason when one does not fit", "[advice]") {
  Evaluator e(setup_on(3, 100));  // 12 GPUs: not a power of two
  const std::vector<SchemeOutcome> all = compare_schemes(e);
  CHECK(all.front().scheme.kind == Scheme::Kind::allreduce);
  // Then every Decent-DP topology, SGP (overlapped and not), D-PSGD, the sharded schemes,
  // local SGD and DiLoCo.
  std::vector<std::string> tail;
  for (std::size_t i = all.size() - 9; i < all.size(); ++i) tail.push_back(all[i].scheme.name());
  CHECK(tail == std::vector<std::string>{"sgp", "sgp-sync", "d-psgd", "zero-1", "zero-2", "fsdp", "hsdp", "local-sgd",
                                         "diloco"});
  bool saw_unavailable = false;
  for (const SchemeOutcome& o : all) {
    if (o.scheme.name() == "one-peer-exp") {
      CHECK(!o.available);
      CHECK(o.unavailable_reason.find("power-of-two") != std::string::npos);
      saw_unavailable = true;
    }
    if (o.scheme.name() == "ring") REQUIRE(o.mixing.has_value());
  }
  CHECK(saw_unavailable);
}

TEST_CASE("advice is values; the report renders the sentences", "[advice][io]") {
  Advice a;
  a.allreduce.iteration.iteration_s = 0.1;
  a.verdict = Verdict::stay_with_allreduce;
  a.bandwidth.outcome = BreakEven::Outcome::crosses;
  a.bandwidth.value = 37.5;
  a.bandwidth.faster_below = true;  // gossip wins on slow networks
  a.nodes.outcome = BreakEven::Outcome::crosses;
  a.nodes.value = 9;
  a.nodes.last_below = 8;
  a.nodes.faster_below = false;  // and on large clusters
  a.caveats.push_back({});
  a.caveats.back().kind = Caveat::Kind::network_not_bottleneck;
  const std::string text = io::advice_text(a);
  CHECK(text.find("verdict: stay with all-reduce: no decentralized topology fits this cluster (100.00 ms") !=
        std::string::npos);
  CHECK(text.find("bandwidth: decentralized training is faster below 37.5 Gbit/s per NIC and slower above\n") !=
        std::string::npos);
  CHECK(text.find("nodes:     decentralized training is faster from 9 nodes on (up to 8 it is slower)\n") !=
        std::string::npos);
  CHECK(text.find("compute:") == std::string::npos);  // no topology, no variability search
  CHECK(text.find("  - All-Reduce exposes less than 2 %") != std::string::npos);
  const io::Json json = io::advice_json(a);
  CHECK(json["verdict"] == "stay with all-reduce");
  CHECK(json["break_even_bandwidth"]["outcome"] == "crosses");
  CHECK(json["break_even_bandwidth"]["nic_gbps"] == 37.5);
  CHECK(json["break_even_bandwidth"]["decentralized_faster"] == "below");
  CHECK(json["break_even_nodes"]["decentralized_faster"] == "above");
  CHECK(json["break_even_variability"]["outcome"] == "not_applicable");
  CHECK(json["caveats"][0]["kind"] == "network_not_bottleneck");
}

TEST_CASE("node-level advice judges consensus over the nodes", "[advice][node_level]") {
  // 8 nodes of 4 GPUs: with node-level gossip the replicas are the 8 nodes, so the chosen
  // topology's spectral gap is that of 8 ranks, not 32.
  Setup s = setup_on(8, 100);
  s.gossip.node_level = true;
  Evaluator e(s);
  const Advice a = advise(e);
  REQUIRE(a.best.has_value());
  REQUIRE(a.best->mixing.has_value());
  // (The two differ for the topology chosen here, so the check tells them apart.)
  REQUIRE(e.mixing(a.best->scheme.topology, 8, 1).spectral_gap != e.mixing(a.best->scheme.topology, 32, 4).spectral_gap);
  CHECK(a.best->mixing->spectral_gap == e.mixing(a.best->scheme.topology, 8, 1).spectral_gap);
  const SchemeOutcome o = e.evaluate(a.best->scheme, {}, true);
  CHECK(o.mixing->spectral_gap == a.best->mixing->spectral_gap);
}

TEST_CASE("a model that fits only sharded: the sharded scheme named even with variable compute, no searches",
          "[advice][memory]") {
  // Llama-2-7B on 16 x DGX H100 with Adam: 6.74 G x (4 weights + 4 gradients + 8 optimizer
  // + 4 buffers) bytes = 125 GiB before activations, against 80 GiB: nothing replicated fits.
  static const ModelSpec llama = *zoo_model("llama-7b");
  Setup s;
  s.cluster = io::load_profile("dgx-h100");
  s.cluster.nodes = 16;
  s.model = &llama;
  s.dtype = DType::bf16;
  s.variability.law = NoiseLaw::normal;
  s.variability.cv = 0.1;
  Evaluator e(s);
  const Advice a = advise(e);
  CHECK(a.verdict == Verdict::does_not_fit);
  REQUIRE(a.sharded_alternative.has_value());
  CHECK(a.sharded_alternative->memory.fits());
  CHECK(a.sharded_without_variability);
  // Nothing replicated fits: those schemes are predicted without variable compute, for
  // reference, instead of simulating 128 ranks that cannot run.
  CHECK(a.unfit_without_variability);
  CHECK_FALSE(a.allreduce.variability.has_value());
  for (const SchemeOutcome& c : a.candidates) CHECK_FALSE(c.variability.has_value());
  CHECK(a.nodes.why == BreakEven::Why::does_not_fit);
  CHECK(a.bandwidth.why == BreakEven::Why::does_not_fit);
  CHECK_FALSE(a.low_communication.has_value());
}

// advise's budget (limits.hpp, kMaxCommandSimulationS) prices every simulation it will run
// before it runs one: every scheme once, the factor attribution (three more of All-Reduce
// and of the dearest topology) and the break-even compute-CV search (eight more of the two,
// at the search's 200 iterations and 20 of warm-up), each at SimulationWork's estimate. The
// refusal's figure is that sum, worked out here from the same plans.
TEST_CASE("advise's refusal prices every scheme, the attribution and the compute-CV search", "[advice][limits]") {
  static const ModelSpec resnet = *zoo_model("resnet50");
  Setup s;
  s.cluster = io::load_profile("dgx-h100");
  s.cluster.nodes = 16384;  // 131,072 GPUs: ResNet-50's 1.18 M rank-buckets, within the CV search's 2^21
  s.model = &resnet;
  s.variability.law = NoiseLaw::normal;  // --compute-cv 0.1
  s.variability.cv = 0.1;
  s.variability.iterations = 1000;
  s.variability.warmup_iterations = 50;
  Evaluator e(s);
  std::vector<Scheme> topology_schemes;  // Decent-DP's, but the complete one (the attribution's dearest among them)
  for (const TopologyInfo& t : topologies()) {
    if (t.gossip && std::string_view(t.name) != "complete") topology_schemes.push_back(Scheme::gossip(t.name));
  }
  std::vector<Scheme> schemes{Scheme::allreduce(), Scheme::gossip("complete")};
  schemes.insert(schemes.end(), topology_schemes.begin(), topology_schemes.end());
  for (const Scheme& scheme : {Scheme::sgp(), Scheme::sgp_sync(), Scheme::dpsgd()}) schemes.push_back(scheme);
  // Each simulation at `iterations` measured, rounded up to whole periods, beside its warm-up.
  struct Priced {
    double each_s = 0.0, warmup = 0.0, period = 1.0;
    bool runs = false;  // refused for its own size at these iterations: not run, not counted
    // A search's warm-up is shortened to `most_warmup` unless a topology's settling made
    // it longer than the 50 asked.
    double at(double iterations, double most_warmup) const {
      const double w = warmup <= 50.0 ? std::min(warmup, most_warmup) : warmup;
      return runs ? each_s * (std::ceil(iterations / period) * period + w) : 0.0;
    }
  };
  const auto priced = [&](const Scheme& scheme) {
    const SchemeOutcome o = e.plan(scheme);
    REQUIRE(o.simulation_work);
    const SimulationWork& w = *o.simulation_work;
    return Priced{w.estimated_s_per_iteration(), w.iterations - w.measured_iterations, static_cast<double>(w.period),
                  o.available};
  };
  double every_s = 0.0;
  for (const Scheme& scheme : schemes) every_s += priced(scheme).at(1000.0, 50.0);
  const Priced allreduce = priced(Scheme::allreduce());
  Priced dearest;  // the dearest Decent-DP topology, the complete one aside, run or not
  for (const Scheme& scheme : topology_schemes) {
    const Priced p = priced(scheme);
    if (p.each_s > dearest.each_s) dearest = p;
  }
  const double attribution_s = 3.0 * (allreduce.at(1000.0, 50.0) + dearest.at(1000.0, 50.0));
  const double cv_search_s = 8.0 * (allreduce.at(200.0, 20.0) + dearest.at(200.0, 20.0));
  const double total_s = every_s + attribution_s + cv_search_s;
  INFO("every scheme " << every_s << " s + attribution " << attribution_s << " s + compute-CV search " << cv_search_s
                       << " s = " << total_s << " s");
  REQUIRE(cv_search_s > 2.0);  // so that the rounded figure shows whether it is counted
  try {
    advise(e);
    FAIL("advise ran beyond its budget");
  } catch (const InputError& error) {
    const std::string message = error.what();
    INFO(message);
    const std::size_t at = message.find("for about ");
    REQUIRE(at != std::string::npos);
    CHECK(std::abs(std::stod(message.substr(at + 10)) - total_s) <= 0.5);
  }
}
