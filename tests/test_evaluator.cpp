// The engine's boundary (Evaluator::evaluate_on): whatever the setup, an outcome it
// returns is finite and non-negative, or it throws an InputError that names the scheme
// and the quantity. The readers keep inputs inside their ranges (limits.hpp); this is the
// check behind them, so the setups here bypass the readers.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "dtperf/analysis/evaluator.hpp"
#include "dtperf/error.hpp"
#include "dtperf/io/profile_json.hpp"
#include "dtperf/zoo.hpp"

using namespace dtperf;
using Catch::Matchers::WithinRel;

namespace {

Setup resnet_on(const ClusterProfile& cluster, const ModelSpec& model) {
  Setup setup;
  setup.cluster = cluster;
  setup.model = &model;
  setup.dtype = DType::bf16;
  return setup;
}

}  // namespace

TEST_CASE("an outcome that is not finite is refused by name, never returned", "[evaluator][errors]") {
  const ModelSpec model = *zoo_model("resnet50");
  ClusterProfile cluster = io::load_profile("dgx-a100");
  // 1e-300 Gbit/s at 1e-6 efficiency: 8 x 102 MB at 10^-294 bit/s take 1.6 x 10^306 s,
  // which a report printed in ms as inf (JSON null).
  cluster.inter.nic_gbps = 1e-300;
  cluster.inter.transport_efficiency = 1e-6;
  Evaluator e(resnet_on(cluster, model));
  std::string message;
  try {
    e.evaluate(Scheme::gossip("torus"));
  } catch (const InputError& error) {
    message = error.what();
  }
  INFO(message);
  CHECK(message.starts_with("prediction: torus on 4 x 8 GPUs: the "));
  CHECK(message.find("came out as 1.64e+306 s, beyond 1e+18 s") != std::string::npos);
}

TEST_CASE("at the ends of the input ranges every outcome is finite", "[evaluator]") {
  const ModelSpec model = *zoo_model("resnet50");
  ClusterProfile cluster = io::load_profile("dgx-a100");
  // The slowest NIC the ranges allow (limits::kNicGbps, kEfficiency): 1 bit/s achieved.
  cluster.inter.nic_gbps = 1e-3;
  cluster.inter.transport_efficiency = 1e-6;
  Evaluator e(resnet_on(cluster, model));
  for (const Scheme& s : {Scheme::allreduce(), Scheme::gossip("torus"), Scheme::gossip("ring"), Scheme::sgp()}) {
    const SchemeOutcome o = e.evaluate(s);
    REQUIRE(o.available);
    CHECK(std::isfinite(o.iteration.iteration_s));
    // 8 GB per node of ring traffic or more at 1 bit/s: years, but a number.
    CHECK(o.iteration.iteration_s > 1e6);
  }
}

TEST_CASE("the memory estimate kept between evaluations follows every input it reads", "[evaluator]") {
  const ModelSpec model = *zoo_model("resnet50");
  const ClusterProfile base = io::load_profile("dgx-a100");
  Evaluator kept(resnet_on(base, model));
  const auto fresh_total = [&](const ClusterProfile& cluster, const Scheme& scheme) {
    Evaluator e(resnet_on(base, model));
    return e.evaluate_on(cluster, scheme).memory.total_bytes();
  };
  ClusterProfile one_gpu = base;
  one_gpu.nodes = 1;
  one_gpu.gpus_per_node = 1;  // no communication buffers on one GPU
  ClusterProfile bigger_gpu = base;
  bigger_gpu.gpu.memory_gib = 2.0 * base.gpu.memory_gib;
  ClusterProfile slower_nic = base;
  slower_nic.inter.nic_gbps = 10.0;  // not read by the estimate: the same bytes
  // In turn: the same estimate again, another cluster, other schemes (FSDP shards the
  // weights), and back.
  const std::vector<std::pair<ClusterProfile, Scheme>> calls{
      {base, Scheme::allreduce()},          {base, Scheme::allreduce()},
      {one_gpu, Scheme::allreduce()},       {base, Scheme::gossip("ring")},
      {base, Scheme::sharded(Sharding::fsdp)}, {bigger_gpu, Scheme::sharded(Sharding::fsdp)},
      {slower_nic, Scheme::allreduce()},    {base, Scheme::allreduce()}};
  std::vector<double> totals;
  for (const auto& [cluster, scheme] : calls) {
    const SchemeOutcome o = kept.evaluate_on(cluster, scheme);
    CHECK(o.memory.total_bytes() == fresh_total(cluster, scheme));
    CHECK(o.memory.capacity_bytes == cluster.gpu.memory_gib * units::GiB);
    totals.push_back(o.memory.total_bytes());
  }
  CHECK(totals[2] < totals[0]);  // one GPU: no buckets
  CHECK(totals[3] == totals[0]);  // DDP's buckets and gossip's buffer: the whole gradients each
  CHECK(totals[4] < totals[3]);
  CHECK(totals[6] == totals[0]);
}

TEST_CASE("a variable-compute simulation counts its rank-steps before it runs", "[evaluator][variability]") {
  // ResNet-50 on 16 nodes of 8: 128 ranks, 4 gossip buckets of 25 MiB (5 for DDP, whose
  // first bucket is 1 MiB). Each rank computes each bucket (one step) and takes part in
  // each exchange round of it: a ring pairs every rank once per step (1 round), the
  // exponential graph on 128 ranks once per distance 2^k, k = 0..6 (7 rounds), SGP's push
  // sends once and receives once (2).
  const ModelSpec model = *zoo_model("resnet50");
  const ClusterProfile cluster = [] {
    ClusterProfile c = io::load_profile("dgx-h100");
    c.nodes = 16;
    return c;
  }();
  Variability v;
  v.law = NoiseLaw::normal;
  v.cv = 0.1;
  v.iterations = 100;
  v.warmup_iterations = 20;
  const NetworkParams net = network_params(cluster, 1.0, {});
  const GossipScenario s{net, compute_params(cluster, DType::bf16), compute_request(model, {}, cluster.ranks()), {}};
  for (const auto& [name, rounds] : {std::pair{"ring", 1.0}, std::pair{"exponential", 7.0}}) {
    INFO(name);
    const Topology topology = make_topology(name, 128, 8);
    GossipPredictor merged(model, compile_schedule(topology, true));
    const GossipResult& settled = merged.predict(s);
    const SimulationWork w = merged.variable_work(v, settled);
    CHECK(w.ranks == 128.0);
    CHECK(w.buckets == 4.0);
    CHECK(w.rounds_per_bucket == rounds);
    CHECK(w.measured_iterations == 100.0);  // period 2 or 1: 100 is whole periods
    // The warm-up: at least 20, at least the settling run, in whole periods.
    CHECK(w.iterations - w.measured_iterations >= std::max(20, settled.iterations_simulated));
    CHECK(w.rank_steps() == 128.0 * 4.0 * (1.0 + rounds) * w.iterations);
    // Any schedule of the topology counts the same: per rank, classes weighted by size.
    GossipPredictor per_rank(model, compile_schedule(topology, false));
    CHECK(per_rank.variable_work(v, settled).rank_steps() == w.rank_steps());
  }
  GossipPredictor sgp(model, compile_sgp_schedule(128, 8, true), GossipAlgorithm::sgp);
  CHECK(sgp.variable_work(v, sgp.predict(s)).rounds_per_bucket == 2.0);
  AllReducePredictor allreduce(model);
  const AllReduceScenario a{net, s.compute, s.request, {}};
  allreduce.predict(a);
  const SimulationWork w = allreduce.variable_work(a, v);
  CHECK(w.rank_steps() == 128.0 * 5.0 * 100.0);  // no exchange rounds, no simulated warm-up
}

TEST_CASE("the most iterations within the limit are whole periods beside the warm-up", "[variability]") {
  // 1,000 ranks x 2 buckets x (1 + 1) steps = 4,000 rank-steps per iteration; a limit of
  // 1,000,000 holds 250 iterations, of which 37 are warm-up: 213 measured, or 210 in
  // whole periods of 14 (14 x 15; 14 x 16 = 224 would not fit).
  SimulationWork w;
  w.ranks = 1000;
  w.buckets = 2;
  w.rounds_per_bucket = 1;
  w.iterations = 37 + 1400;
  w.measured_iterations = 1400;
  w.period = 14;
  CHECK(w.most_measured_iterations(1e6) == 210.0);
  w.period = 1;
  CHECK(w.most_measured_iterations(1e6) == 213.0);
  CHECK(w.most_measured_iterations(4000.0 * 30) == 0.0);  // the warm-up alone is over
}

TEST_CASE("a simulation's time on the reference core, as a command's budget prices it", "[variability]") {
  // limits.hpp: 10 ns per rank and iteration; per rank and bucket 1 ns for All-Reduce, 3 ns
  // for gossip's first round and 0.3 ns for each further one; twice all that beyond 16,384
  // ranks.
  SimulationWork w;
  w.ranks = 1024;
  w.buckets = 145;
  w.iterations = 1050;
  w.rounds_per_bucket = 0;  // All-Reduce: 1024 x (10 + 145 x 1) ns = 158.72 us per iteration
  CHECK_THAT(w.estimated_s_per_iteration(), WithinRel(158.72e-6, 1e-12));
  CHECK_THAT(w.estimated_s(), WithinRel(158.72e-6 * 1050, 1e-12));
  w.rounds_per_bucket = 10;  // the exponential graph: 1024 x (10 + 145 x (3 + 9 x 0.3)) ns
  CHECK_THAT(w.estimated_s_per_iteration(), WithinRel(1024 * (10 + 145 * 5.7) * 1e-9, 1e-12));
  w.ranks = 131072;  // out of cache: twice as much
  w.buckets = 4;
  w.rounds_per_bucket = 1;  // 2 x 131072 x (10 + 4 x 3) ns = 5.767168 ms per iteration
  CHECK_THAT(w.estimated_s_per_iteration(), WithinRel(5.767168e-3, 1e-12));
}

TEST_CASE("plan gives the work evaluate simulates, without simulating it", "[evaluator][variability]") {
  const ModelSpec model = *zoo_model("resnet50");
  ClusterProfile cluster = io::load_profile("dgx-h100");
  cluster.nodes = 4;
  Setup setup = resnet_on(cluster, model);
  setup.variability.law = NoiseLaw::normal;
  setup.variability.cv = 0.1;
  setup.variability.iterations = 40;
  for (const Scheme& scheme : {Scheme::allreduce(), Scheme::gossip("ring"), Scheme::sgp()}) {
    Evaluator e(setup);
    const SchemeOutcome planned = e.plan(scheme);
    const SchemeOutcome run = e.evaluate(scheme);
    INFO(scheme.name());
    REQUIRE(planned.simulation_work);
    REQUIRE(run.simulation_work);
    CHECK(planned.simulation_work->rank_steps() == run.simulation_work->rank_steps());
    CHECK(planned.simulation_work->iterations == run.simulation_work->iterations);
    CHECK(planned.iteration.iteration_s == 0.0);  // nothing simulated
    CHECK(run.iteration.iteration_s > 0.0);
  }
  // Without variable compute nothing simulates every rank.
  setup.variability = {};
  Evaluator e(setup);
  CHECK_FALSE(e.plan(Scheme::gossip("ring")).simulation_work);
}

TEST_CASE("variable compute beyond its limits is refused before it runs", "[evaluator][variability][errors]") {
  const ModelSpec model = *zoo_model("resnet50");
  ClusterProfile cluster = io::load_profile("dgx-h100");
  Setup setup = resnet_on(cluster, model);
  setup.variability.law = NoiseLaw::normal;
  setup.variability.cv = 0.1;
  // All-Reduce, every analysis's baseline, is refused outright; a topology is not
  // applicable (compare and advise go on with the others), naming the option to change.
  const auto refusal = [&](const ClusterProfile& c, const Scheme& scheme) {
    Evaluator e(setup);
    try {
      const SchemeOutcome o = e.evaluate_on(c, scheme);
      if (!o.available) return o.unavailable_input + ": " + o.unavailable_reason;
    } catch (const InputError& error) {
      return std::string(error.what());
    }
    return std::string("no refusal");
  };
  ClusterProfile huge = cluster;
  huge.nodes = 16385;  // 131,080 ranks
  CHECK_THAT(refusal(huge, Scheme::allreduce()), Catch::Matchers::Contains("at most 131072"));
  CHECK_THAT(refusal(huge, Scheme::gossip("ring")), Catch::Matchers::Contains("at most 131072"));
  // 1,024 ranks x 4 buckets x 2 steps = 8,192 rank-steps per iteration: 2^31 of them hold
  // 262,144 iterations with the warm-up.
  setup.variability.iterations = 300000;
  ClusterProfile large = cluster;
  large.nodes = 128;
  const std::string ring = refusal(large, Scheme::gossip("ring"));
  CHECK_THAT(ring, Catch::Matchers::StartsWith("sim-iterations: variable compute with ring on 128 x 8 GPUs"));
  CHECK_THAT(ring, Catch::Matchers::Contains("1024 ranks x 4 buckets x 2 steps per bucket"));
  CHECK_THAT(ring, Catch::Matchers::Contains("simulate at most 2620"));  // 262,144 - the warm-up
  // 1,024 ranks x 5 buckets x 1 step: 419,430 iterations fit (2^31 / 5,120).
  setup.variability.iterations = 500000;
  CHECK_THAT(refusal(large, Scheme::allreduce()),
             Catch::Matchers::StartsWith("sim-iterations: variable compute with all-reduce") &&
                 Catch::Matchers::Contains("at most 419430 iterations"));
  setup.variability.iterations = 1000;
  CHECK(refusal(large, Scheme::gossip("ring")) == "no refusal");
}
