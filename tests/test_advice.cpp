// The advisor: anchoring reproduces a measurement, the factor shares add up to the gain,
// break-even points separate the two regimes, and the verdict follows the network.
#include <catch2/catch.hpp>

#include "dtperf/advice.hpp"
#include "dtperf/error.hpp"
#include "dtperf/io/profile_json.hpp"
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
  CHECK(a.factors[2].factor == "variable compute");
  CHECK(a.factors[2].seconds == 0.0);  // no variability in this scenario
  CHECK_THAT(a.speedup, WithinRel(a.allreduce.iteration.iteration_s / a.best->iteration.iteration_s, 1e-12));
}

TEST_CASE("the verdict follows the network", "[advice]") {
  // 10 Gbit/s NICs: All-Reduce of 244 MB per iteration dominates; gossip hides most of it.
  Evaluator slow(setup_on(8, 10));
  CHECK(advise(slow).verdict == "decentralize");
  // One node: NVLink only, nothing to gain.
  Evaluator one_node(setup_on(1, 100));
  const Advice a = advise(one_node);
  CHECK(a.verdict != "decentralize");
}

TEST_CASE("break-even points separate the two regimes", "[advice][break-even]") {
  Evaluator e(setup_on(8, 100));
  const Advice a = advise(e);
  REQUIRE(a.bandwidth.found);
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
  INFO(a.bandwidth.description);
  CHECK((advantage(a.bandwidth.value * 0.9) > 0.0) != (advantage(a.bandwidth.value * 1.1) > 0.0));
}

TEST_CASE("compare lists every topology, with the reason when one does not fit", "[advice]") {
  Evaluator e(setup_on(3, 100));  // 12 GPUs: not a power of two
  const std::vector<SchemeOutcome> all = compare_schemes(e);
  CHECK(all.front().scheme.kind == Scheme::Kind::allreduce);
  CHECK(all.back().scheme.kind == Scheme::Kind::sgp);
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
