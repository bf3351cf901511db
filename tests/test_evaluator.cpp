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
