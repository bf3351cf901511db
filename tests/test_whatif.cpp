// The what-if solvers: tabulated rates, least rate, least compression, nodes to win.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <string>

#include "dtperf/io/model_files.hpp"
#include "dtperf/io/profile_json.hpp"
#include "dtperf/analysis/whatif.hpp"
#include "dtperf/zoo.hpp"

using namespace dtperf;

namespace {

const std::string kData = std::string(DTPERF_VALIDATION_DATA) + "/training-bottleneck/";

// ResNet-50 All-Reduce on the p3dn profile (overheads and all).
struct Resnet {
  ModelSpec model = *zoo_model("resnet50");
  Setup setup;
  Resnet() {
    setup.cluster = io::load_profile("p3dn-24xlarge");
    setup.model = &model;
  }
};

}  // namespace

TEST_CASE("[NET] compression study: ResNet-50 on 64 GPUs at 10 Gbit/s, 1x / 2x / 5x", "[whatif][validation][net]") {
  INFO("the [NET] logs are not at " << kData << " (validation/data/training-bottleneck in the repository)");
  REQUIRE(std::filesystem::exists(kData + "resnet50.bk.log"));
  // [NET]'s simulator (sim_with_compression_*.py): the measured backward log, Horovod
  // fusion (5 ms / 64 MiB), ring all-reduce at line rate without latency, the measured
  // vector-add cost, no overheads; scaling = T / (T + overhead), T = 128.09 ms measured
  // on one GPU. The paper reads about 54, 82 and 99 % from it; bound: 1 point, as for the
  // rate study (tests/test_validation_net.cpp).
  const ModelSpec model = io::read_timing_log(kData + "resnet50.bk.log");
  const auto vector_add = io::read_reduction_log(kData + "cuda_vec_add.log");
  ClusterOverrides o;
  o.nodes = 8;
  o.gpus_per_node = 8;
  o.nics_per_node = 1;
  o.nic_gbps = 10;
  o.transport_efficiency = 1.0;
  o.host_gbps = 0.0;
  o.inter_latency_s = 0.0;
  o.intra_latency_s = 0.0;
  o.interference_factor = 1.0;
  o.iteration_overhead_s = 0.0;
  o.cross_node_overhead_s = 0.0;
  Setup setup;
  setup.cluster = apply_overrides(io::load_profile("p3dn-24xlarge"), o);
  setup.model = &model;
  setup.reduction = vector_add;
  setup.workload.single_gpu_iteration_s = 0.12808580219559176;
  setup.allreduce.algorithm = Algorithm::ring;
  setup.allreduce.bucketing = Bucketing::horovod;
  setup.allreduce.framework_copies = false;
  const struct {
    double ratio;
    double paper_percent;
  } points[] = {{1, 54}, {2, 82}, {5, 99}};
  for (const auto& p : points) {
    Evaluator e(with_compression(setup, p.ratio, 0.0));
    const double percent = 100.0 * e.evaluate(Scheme::allreduce()).iteration.scaling_factor;
    INFO(p.ratio << "x: dtperf " << percent << " %, [NET] " << p.paper_percent << " %");
    CHECK(std::abs(percent - p.paper_percent) <= 1.0);
  }
  // The solver agrees with the table: 2x is short of 95 %, 5x beyond it.
  Evaluator base(setup);
  const Solved least = least_compression(base, Scheme::allreduce(), 0.95, 0.0);
  CHECK(base.setup().workload.compression_ratio == setup.workload.compression_ratio);  // restored
  REQUIRE(least.value);
  CHECK(*least.value > 2.0);
  CHECK(*least.value < 5.0);
}

TEST_CASE("the least rate reaches the target, and a rate a little lower does not", "[whatif]") {
  Resnet r;
  r.setup.cluster.compute.iteration_overhead_s = 0.0;
  r.setup.cluster.compute.cross_node_overhead_s = 0.0;
  Evaluator e(r.setup);
  const Solved s = least_rate_gbps(e, Scheme::allreduce(), 0.8, false);
  REQUIRE(s.value);
  const auto scaling_at = [&](double gbps) {
    ClusterProfile c = r.setup.cluster;
    c.inter.nic_gbps = gbps;
    return e.evaluate_on(c, Scheme::allreduce()).iteration.scaling_factor;
  };
  CHECK(scaling_at(*s.value) >= 0.8);
  CHECK(scaling_at(*s.value * (1.0 - 1e-3)) < 0.8);
  CHECK(s.best_scaling >= 0.8);
}

TEST_CASE("at line rate the least rate is the achieved rate: efficiency x the profile's answer", "[whatif]") {
  // Links run at efficiency x rate, so a rate R at efficiency 0.5 is R / 2 at line rate:
  // the least line rate is half the least rate at the profile's efficiency.
  Resnet r;
  r.setup.cluster.inter.transport_efficiency = 0.5;
  r.setup.cluster.inter.host_gbps = 0.0;
  Evaluator e(r.setup);
  const Solved at_profile = least_rate_gbps(e, Scheme::allreduce(), 0.7, false);
  const Solved at_line = least_rate_gbps(e, Scheme::allreduce(), 0.7, true);
  REQUIRE(at_profile.value);
  REQUIRE(at_line.value);
  CHECK(*at_line.value == Approx(*at_profile.value * 0.5).epsilon(2e-4));
}

TEST_CASE("a target above what compute and overheads allow is not reached, with the ceiling said", "[whatif]") {
  // 42 ms per iteration that no network change touches (as [NET] measured on p3dn: 22.3 ms
  // per distributed iteration and 19.9 ms more across nodes, given here as a what-if) cap
  // ResNet-50 near 72 % whatever the network does.
  Resnet r;
  r.setup.cluster.compute.iteration_overhead_s = 22.3e-3;
  r.setup.cluster.compute.cross_node_overhead_s = 19.9e-3;
  Evaluator e(r.setup);
  const Solved s = least_rate_gbps(e, Scheme::allreduce(), 0.95, false);
  CHECK_FALSE(s.value);
  CHECK(s.best_scaling < 0.95);
  CHECK(s.best_scaling > 0.6);
  const Solved c = least_compression(e, Scheme::allreduce(), 0.95, 0.0);
  CHECK_FALSE(c.value);
}

TEST_CASE("what bounds the scaling factor at any NIC rate: the overheads, or the intra-node link", "[whatif]") {
  // Fixed overheads: the same 42 ms as above; the V100s' NVLink (150 GB/s) is not the limit.
  Resnet r;
  r.setup.cluster.compute.iteration_overhead_s = 22.3e-3;
  r.setup.cluster.compute.cross_node_overhead_s = 19.9e-3;
  {
    Evaluator e(r.setup);
    const BoundAtAnyRate b = bound_at_any_rate(e, Scheme::allreduce());
    CHECK(b.limit == RateBound::compute_and_overheads);
    CHECK(b.unbounded_scaling == b.best_scaling);
    CHECK(b.best_scaling == Approx(least_rate_gbps(e, Scheme::allreduce(), 0.99, false).best_scaling));
  }
  // The same nodes with PCIe Gen3 x16 between their GPUs (15.75 GB/s) and no overheads:
  // the ring moves 2 (G-1)/G x 102 MB of gradients through each GPU's PCIe link, 11.4 ms
  // at 15.75 GB/s against ResNet-50's compute; an unbounded intra-node link lifts the
  // scaling factor by more than a point, so PCIe is named.
  r.setup.cluster.compute.iteration_overhead_s = 0.0;
  r.setup.cluster.compute.cross_node_overhead_s = 0.0;
  r.setup.cluster.intra.bandwidth_bytes_per_s = 15.75e9;
  Evaluator pcie(r.setup);
  const BoundAtAnyRate b = bound_at_any_rate(pcie, Scheme::allreduce());
  CHECK(b.limit == RateBound::intra_node_link);
  CHECK(b.unbounded_scaling - b.best_scaling >= kBoundLiftPoints / 100.0);
  CHECK(std::string(bound_name(b.limit)) == "intra-node-link");
}

TEST_CASE("the codec's cost is charged once per iteration per gradient byte", "[whatif]") {
  // 102.2 MB of ResNet-50 gradients at 0.1 ns per byte: 10.2 ms more per iteration.
  Resnet r;
  const double before = r.setup.cluster.compute.iteration_overhead_s;
  const Setup s = with_compression(r.setup, 4.0, 0.1e-9);
  CHECK(s.workload.compression_ratio == 4.0);
  CHECK(s.cluster.compute.iteration_overhead_s - before == Approx(0.1e-9 * r.model.total_bytes()));
  CHECK(r.model.total_bytes() * 0.1e-9 == Approx(0.01022).epsilon(1e-3));
  // No compression, no codec.
  CHECK(with_compression(r.setup, 1.0, 0.1e-9).cluster.compute.iteration_overhead_s == before);
}

TEST_CASE("the least node count where a decentralized scheme wins", "[whatif]") {
  // [DEC]'s setting: Transformer-base on 4xA100 nodes; AER needs whole nodes in a power
  // of two >= 2, and already wins on 2 nodes (the paper: 18-20 % at 8 to 32 GPUs).
  const ModelSpec model = *zoo_model("transformer-base");
  Setup setup;
  setup.cluster = io::load_profile("a100x4-ib100");
  setup.model = &model;
  setup.dtype = DType::fp16;
  setup.workload.global_batch = 25000;
  Evaluator e(setup);
  const NodesToWin win = least_nodes_to_win(e, Scheme::gossip("alternating-exp-ring"), 64);
  REQUIRE(win.nodes);
  CHECK(*win.nodes == 2);
  CHECK(win.speedup > 1.0);
}
