// Sharded data parallelism: the FSDP and ZeRO timelines written out by hand for two ranks
// and two units, hybrid sharding on one node is FSDP, reduced gradient bytes, and memory.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "dtperf/analysis/advice.hpp"
#include "dtperf/io/profile_json.hpp"
#include "dtperf/sharded.hpp"
#include "dtperf/zoo.hpp"

using namespace dtperf;
using Catch::Matchers::WithinRel;

namespace {

// Two tensors in backward order: t0 with 2 M parameters (8 MB: over DDP's 1 MiB first
// bucket, so a unit of its own), then t1 with 4 M (16 MB, the second unit).
ModelSpec two_units() {
  ModelSpec m;
  m.name = "two";
  m.param_bytes = 4;
  m.default_optimizer = Optimizer::adam;
  for (const std::int64_t params : {2'000'000, 4'000'000}) {
    TensorSpec t;
    t.name = "t" + std::to_string(m.tensors.size());
    t.params = params;
    t.forward_flops_per_sample = 2e9 * static_cast<double>(params) / 1e6;
    t.backward_flops_per_sample = 2.0 * t.forward_flops_per_sample;
    t.forward_gemm_flops_per_sample = t.forward_flops_per_sample;
    m.tensors.push_back(t);
  }
  return m;
}

ShardedScenario two_ranks(Sharding sharding) {
  ShardedScenario s;
  s.sharding = sharding;
  s.network.nodes = 1;
  s.network.gpus_per_node = 2;
  s.network.intra_bytes_per_s = 10e9;  // slow enough that communication shows
  s.network.intra_latency_s = 0.0;
  s.param_network = s.network;
  s.compute.peak_flops_per_s = 100e12;
  s.compute.vector_flops_per_s = 10e12;
  s.request.batch_per_gpu = 8;
  s.request.optimizer = Optimizer::adam;
  return s;
}

struct Parts {
  double f0, f1, b0, b1, optimizer, a0, a1, r0, r1;
};

// The inputs of the timeline: compute times of each unit and the collectives' costs, from
// the same functions the engine calls.
Parts parts(const ModelSpec& m, const ShardedScenario& s) {
  std::vector<double> backward(2);
  ComputeTimes t{backward};
  compute_times(m, s.compute, s.request, t);
  const GroupShape node{1, 2, 2};
  const auto ag = [&](double bytes) { return collective_cost(s.param_network, node, Collective::all_gather, bytes).time_s; };
  const auto rs = [&](double bytes) { return collective_cost(s.network, node, Collective::reduce_scatter, bytes).time_s; };
  const double total = backward[0] + backward[1];
  return {t.forward_s * backward[0] / total, t.forward_s * backward[1] / total, backward[0], backward[1], t.optimizer_s,
          ag(8e6), ag(16e6), rs(8e6), rs(16e6)};
}

}  // namespace

TEST_CASE("FSDP on two ranks, two units: the timeline by hand", "[sharded]") {
  const ModelSpec m = two_units();
  const ShardedScenario s = two_ranks(Sharding::fsdp);
  const Parts p = parts(m, s);
  // Forward runs unit 1 then unit 0. AG(1) from 0; unit 1 computes once it is gathered;
  // AG(0) is issued when unit 1 starts (one ahead) and queues behind AG(1).
  const double forward1_start = p.a1;
  const double ag0_end = p.a1 + p.a0;
  const double forward0_start = std::max(forward1_start + p.f1, ag0_end);
  const double forward_end = forward0_start + p.f0;
  // Backward: unit 0 is still gathered and starts at once; AG(1) is issued then (the
  // stream is idle: AG(0) ended before forward did); RS(0) when unit 0's backward ends.
  const double ag1_end = std::max(forward_end, ag0_end) + p.a1;
  const double backward0_end = forward_end + p.b0;
  const double rs0_end = std::max(ag1_end, backward0_end) + p.r0;
  const double backward1_end = std::max(backward0_end, ag1_end) + p.b1;
  const double rs1_end = std::max(rs0_end, backward1_end) + p.r1;
  // Adam steps on half the parameters.
  const double expected = std::max(backward1_end, rs1_end) + p.optimizer / 2.0;

  const IterationResult r = predict_sharded(m, s);
  CHECK_THAT(r.iteration_s, WithinRel(expected, 1e-12));
  CHECK_THAT(r.optimizer_s, WithinRel(p.optimizer / 2.0, 1e-12));
  // Communication busy: AG twice for unit 1, once for unit 0, RS of both.
  CHECK_THAT(r.comm_busy_s, WithinRel(2.0 * p.a1 + p.a0 + p.r0 + p.r1, 1e-12));
  CHECK(r.buckets == 2);
  // Exposed: everything beyond pure compute and the optimizer.
  CHECK_THAT(r.exposed_comm_s, WithinRel(expected - p.optimizer / 2.0 - (p.f0 + p.f1 + p.b0 + p.b1), 1e-9));
}

TEST_CASE("ZeRO-2 on two ranks: reduce-scatter in backward, all-gather after the step", "[sharded]") {
  const ModelSpec m = two_units();
  const ShardedScenario s = two_ranks(Sharding::zero2);
  const Parts p = parts(m, s);
  const double forward = p.f0 + p.f1;
  const double rs0_end = forward + p.b0 + p.r0;
  const double rs1_end = std::max(rs0_end, forward + p.b0 + p.b1) + p.r1;
  const double step_end = std::max(forward + p.b0 + p.b1, rs1_end) + p.optimizer / 2.0;
  const double expected = step_end + p.a0 + p.a1;
  const IterationResult r = predict_sharded(m, s);
  CHECK_THAT(r.iteration_s, WithinRel(expected, 1e-12));
  CHECK_THAT(r.exposed_comm_s, WithinRel(expected - forward - p.b0 - p.b1 - p.optimizer / 2.0, 1e-9));
  // ZeRO-1 moves the same bytes in the same order.
  CHECK(predict_sharded(m, two_ranks(Sharding::zero1)).iteration_s == r.iteration_s);
}

TEST_CASE("hybrid sharding on one node is FSDP; across nodes it adds an all-reduce of the shard", "[sharded]") {
  const ModelSpec m = two_units();
  CHECK(predict_sharded(m, two_ranks(Sharding::hsdp)).iteration_s == predict_sharded(m, two_ranks(Sharding::fsdp)).iteration_s);
  ShardedScenario two_nodes = two_ranks(Sharding::hsdp);
  two_nodes.network.nodes = 2;
  two_nodes.network.nic_line_bytes_per_s = 12.5e9;
  two_nodes.param_network = two_nodes.network;
  const IterationResult r = predict_sharded(m, two_nodes);
  // Only the shards cross nodes: each of the node's 2 GPUs all-reduces its shard, 8/2 and
  // 16/2 MB, with its peer on the other node (ring: 2 (n-1)/n x S leave per direction, here
  // S), so the node's NICs carry 2 x (4 + 8) MB.
  CHECK_THAT(r.inter_bytes_per_node, WithinRel(2 * (4e6 + 8e6), 1e-9));
}

TEST_CASE("a bf16 gradient reduction halves All-Reduce's bytes", "[sharded][grad-dtype]") {
  static const ModelSpec model = *zoo_model("resnet50");
  Setup s;
  s.cluster = io::load_profile("p3dn-24xlarge");
  s.model = &model;
  s.allreduce.algorithm = Algorithm::ring;  // auto may pick the tree for the smaller wire size
  Evaluator e(s);
  const double fp32 = e.evaluate(Scheme::allreduce()).iteration.inter_bytes_per_node;
  s.workload.grad_bytes = 2;
  Evaluator half(s);
  CHECK_THAT(half.evaluate(Scheme::allreduce()).iteration.inter_bytes_per_node, WithinRel(fp32 / 2.0, 1e-9));
}

TEST_CASE("Llama-7B with Adam fits on H100s sharded, and advise says so", "[sharded][memory]") {
  static const ModelSpec llama = *zoo_model("llama-7b");
  Setup s;
  s.cluster = io::load_profile("dgx-h100");
  s.model = &llama;
  s.dtype = DType::bf16;
  Evaluator e(s);
  const SchemeOutcome fsdp = e.evaluate(Scheme::sharded(Sharding::fsdp));
  // 16 bytes of weights, gradients and Adam state per parameter over 32 GPUs: 3.4 GB.
  const double params = static_cast<double>(llama.total_params());
  CHECK_THAT(fsdp.memory.weights_bytes + fsdp.memory.gradients_bytes + fsdp.memory.optimizer_bytes,
             WithinRel(params * 16.0 / 32.0, 1e-12));
  CHECK(fsdp.memory.fits());
  CHECK_FALSE(e.evaluate(Scheme::allreduce()).memory.fits());
  const Advice advice = advise(e);
  CHECK(advice.verdict == Verdict::does_not_fit);
  REQUIRE(advice.sharded_alternative.has_value());
  CHECK(advice.sharded_alternative->memory.fits());
}
