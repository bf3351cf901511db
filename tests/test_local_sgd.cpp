// Local SGD and DiLoCo: rounds written out by hand (local_sgd.hpp has the equations).
// Every case uses a one-tensor model of 1 M fp32 parameters (4 MB), NICs of 1 GB/s with
// no latency, memory at 1e12 B/s and no kernel floor, so each part of a round is a
// number one can check on paper: 1 M elements x 12 bytes at 1e12 B/s = 12 us.
#include <catch2/catch.hpp>

#include "dtperf/analysis/advice.hpp"
#include "dtperf/analysis/evaluator.hpp"
#include "dtperf/local_sgd.hpp"
#include "dtperf/io/profile_json.hpp"
#include "dtperf/zoo.hpp"

using namespace dtperf;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

namespace {

constexpr double kMs = 1e-3;
constexpr double kUs = 1e-6;

ModelSpec one_tensor() {
  ModelSpec m;
  m.name = "one";
  m.param_bytes = 4;
  TensorSpec t;
  t.name = "w";
  t.params = 1'000'000;
  t.forward_flops_per_sample = 1e9;
  t.backward_flops_per_sample = 2e9;
  t.forward_gemm_flops_per_sample = 1e9;
  m.tensors.push_back(t);
  return m;
}

// `nodes` x `per_node` GPUs; a single-GPU iteration measured at 1.5 ms.
LocalSgdScenario scenario(int nodes, int per_node, LocalSgdOptions options) {
  LocalSgdScenario s;
  NetworkParams& n = s.network;
  n.nodes = nodes;
  n.gpus_per_node = per_node;
  n.intra_bytes_per_s = 100e9;
  n.nics_per_node = 1;
  n.nic_line_bytes_per_s = 1e9;
  s.inner_network = n;
  s.compute.peak_flops_per_s = 100e12;
  s.compute.vector_flops_per_s = 10e12;
  s.compute.memory_bytes_per_s = 1e12;
  s.compute.kernel_overhead_s = 0.0;
  s.request.source = ComputeSource::measured_iteration;
  s.request.single_gpu_iteration_s = 1.5 * kMs;
  s.request.batch_per_gpu = 8;
  s.inner.algorithm = Algorithm::ring;
  s.options = options;
  return s;
}

LocalSgdOptions every(int h) {
  LocalSgdOptions o;
  o.inner_steps = h;
  return o;
}

}  // namespace

TEST_CASE("blocking DiLoCo on 2 GPUs: H inner steps, then the outer all-reduce with compute waiting", "[local-sgd]") {
  const ModelSpec m = one_tensor();
  const LocalSgdResult r = predict_local_sgd(m, scenario(2, 1, every(10)));
  // A group is one GPU: its inner step is the single-GPU iteration.
  CHECK_THAT(r.inner.iteration_s, WithinRel(1.5 * kMs, 1e-12));
  // Outer gradient on the whole model (g = 1): 1 M x (8 + 4) B = 12 us. The all-reduce of
  // 4 MB between 2 groups: the ring sends 2 (n-1)/n x 4 MB = 4 MB at 1 GB/s = 4 ms.
  // Nesterov step: 1 M x 24 B = 24 us. fp32 is reduced by the all-reduce: nothing to fold.
  CHECK_THAT(r.round.prep_s, WithinRel(12 * kUs, 1e-9));
  CHECK_THAT(r.round.comm_s, WithinRel(4 * kMs, 1e-9));
  CHECK(r.round.wait_s == r.round.comm_s);
  CHECK(r.round.fold_s == 0.0);
  CHECK_THAT(r.round.step_s, WithinRel(24 * kUs, 1e-9));
  // round = 10 x 1.5 + 0.012 + 4 + 0.024 = 19.036 ms; per step 1.9036 ms.
  CHECK_THAT(r.round.round_s, WithinRel(19.036 * kMs, 1e-9));
  CHECK_THAT(r.iteration.iteration_s, WithinRel(1.9036 * kMs, 1e-9));
  CHECK_THAT(r.round.compute_utilization, WithinRel(15.0 / 19.036, 1e-9));
  CHECK_THAT(r.iteration.exposed_comm_s, WithinRel(0.4 * kMs, 1e-9));
  // 4 MB per GPU across groups per round: 0.4 MB per inner step.
  CHECK_THAT(r.iteration.inter_bytes_per_gpu, WithinRel(0.4e6, 1e-9));

  // Local SGD averages instead: its step reads and writes 1 M x (12 + 4) B = 16 us.
  LocalSgdScenario plain = scenario(2, 1, every(10));
  plain.optimizer = OuterOptimizer::average;
  CHECK_THAT(predict_local_sgd(m, plain).round.round_s, WithinRel(19.028 * kMs, 1e-9));
}

TEST_CASE("delayed DiLoCo hides the outer all-reduce behind the next inner phase", "[local-sgd]") {
  const ModelSpec m = one_tensor();
  LocalSgdOptions o = every(10);
  o.sync = OuterSync::delayed;
  LocalSgdScenario s = scenario(2, 1, o);
  LocalSgdResult r = predict_local_sgd(m, s);
  // 4 ms of communication beside 10 x 1.5 = 15 ms of inner steps: nothing waited.
  CHECK_THAT(r.round.window_s, WithinRel(15 * kMs, 1e-12));
  CHECK(r.round.wait_s == 0.0);
  CHECK_THAT(r.round.round_s, WithinRel(15.036 * kMs, 1e-9));

  // With contention: communication x 1.25 beside compute (5 ms), and a one-GPU group's
  // compute x 1.1 beside it: 5 ms x (1 - 1/1.1) = 0.4545 ms longer.
  s.compute.comm_interference_factor = 1.25;
  s.compute.interference_factor = 1.1;
  r = predict_local_sgd(m, s);
  CHECK_THAT(r.round.comm_s, WithinRel(5 * kMs, 1e-9));
  CHECK_THAT(r.round.slow_s, WithinRel(5 * kMs * (1.0 - 1.0 / 1.1), 1e-9));
  CHECK_THAT(r.round.round_s, WithinRel(15.036 * kMs + 5 * kMs * (1.0 - 1.0 / 1.1), 1e-9));

  // On a 2 ms inner phase (H = 1, window 1.5 ms) 5 ms of stretched communication cannot
  // hide: 1.5 ms beside compute at x 1.25 carries 1.2 ms of the 4, the other 2.8 ms run
  // alone: 4.3 ms in all, 2.8 ms waited.
  s.options.inner_steps = 1;
  r = predict_local_sgd(m, s);
  CHECK_THAT(r.round.comm_s, WithinRel(4.3 * kMs, 1e-9));
  CHECK_THAT(r.round.wait_s, WithinRel(2.8 * kMs, 1e-9));
}

TEST_CASE("streaming DiLoCo: P fragments of 1/P of the model, each overlapped with tau inner steps", "[local-sgd]") {
  const ModelSpec m = one_tensor();
  LocalSgdOptions o = every(10);
  o.sync = OuterSync::streaming;
  o.fragments = 2;
  o.overlap_steps = 1;
  const LocalSgdResult r = predict_local_sgd(m, scenario(2, 1, o));
  // Each fragment: 0.5 M elements, a 2 ms all-reduce beside one 1.5 ms inner step: 0.5 ms
  // waited; 6 us of outer gradient, 12 us of Nesterov step.
  CHECK(r.round.fragments == 2);
  CHECK_THAT(r.round.comm_s, WithinRel(2 * kMs, 1e-9));
  CHECK_THAT(r.round.wait_s, WithinRel(0.5 * kMs, 1e-9));
  // round = 10 x 1.5 + 2 x (0.006 + 0.5 + 0.012) = 16.036 ms.
  CHECK_THAT(r.round.round_s, WithinRel(16.036 * kMs, 1e-9));
}

TEST_CASE("quantized outer gradients are all-gathered and folded; gossip exchanges with one peer group",
          "[local-sgd]") {
  const ModelSpec m = one_tensor();
  LocalSgdOptions o = every(10);
  o.codec = OuterCodec::int8;
  LocalSgdResult r = predict_local_sgd(m, scenario(4, 1, o));
  // int8 with one fp32 scale per 256: 1 M x (1 + 4/256) = 1.015625 MB per group. The
  // all-gather of 4 of them: each rank sends 3 x 1.015625 MB at 1 GB/s = 3.046875 ms.
  CHECK_THAT(r.round.comm_s, WithinRel(3.046875 * kMs, 1e-9));
  CHECK_THAT(r.round.wire_bytes_per_gpu, WithinRel(3.046875e6, 1e-9));
  // Encoding: 1 M x (12 + 9) B = 21 us; folding all 4 encodings: 4 x 9 B x 1 M = 36 us.
  CHECK_THAT(r.round.prep_s, WithinRel(21 * kUs, 1e-9));
  CHECK_THAT(r.round.fold_s, WithinRel(36 * kUs, 1e-9));

  // bf16 is all-reduced as it is: 2 MB, ring over 4: 2 x 3/4 x 2 MB = 3 MB = 3 ms; cast
  // 6 B and back 6 B per element.
  o.codec = OuterCodec::bf16;
  r = predict_local_sgd(m, scenario(4, 1, o));
  CHECK_THAT(r.round.comm_s, WithinRel(3 * kMs, 1e-9));
  CHECK_THAT(r.round.prep_s, WithinRel(18 * kUs, 1e-9));
  CHECK_THAT(r.round.fold_s, WithinRel(6 * kUs, 1e-9));

  // Gossip: this round's peer group only, 4 MB each way at 1 GB/s = 4 ms whatever M is;
  // one fp32 encoding folded (12 B per element).
  o.codec = OuterCodec::fp32;
  o.outer_gossip = true;
  r = predict_local_sgd(m, scenario(4, 1, o));
  CHECK_THAT(r.round.comm_s, WithinRel(4 * kMs, 1e-9));
  CHECK_THAT(r.round.fold_s, WithinRel(12 * kUs, 1e-9));
}

TEST_CASE("groups of several GPUs split the outer gradient over their rails and gather it inside", "[local-sgd]") {
  const ModelSpec m = one_tensor();
  const LocalSgdResult r = predict_local_sgd(m, scenario(2, 2, every(10)));
  // g = 2: each GPU all-reduces a 2 MB shard with its peer on the other node; both GPUs of
  // a node share its one NIC: 4 MB through it at 1 GB/s = 4 ms. Then the averaged outer
  // gradient (4 MB fp32) is all-gathered between the 2 GPUs: 2 MB at 100 GB/s = 20 us.
  CHECK_THAT(r.round.comm_s, WithinRel(4.02 * kMs, 1e-9));
  CHECK_THAT(r.round.prep_s, WithinRel(6 * kUs, 1e-9));  // the shard's outer gradient
  CHECK_THAT(r.round.step_s, WithinRel(24 * kUs, 1e-9));  // every GPU steps the whole model
  CHECK(r.round.groups == 2);
  CHECK(r.round.gpus_per_group == 2);
}

TEST_CASE("local SGD says why it cannot run", "[local-sgd]") {
  LocalSgdOptions o = every(10);
  CHECK(local_sgd_unavailable(o, 2) == std::nullopt);
  CHECK(local_sgd_unavailable(o, 1).value() == "needs at least 2 groups: 1 node in groups of 1 makes 1");
  o.group_nodes = 2;
  CHECK(local_sgd_unavailable(o, 3).value() == "3 nodes do not split into groups of 2 nodes");
  o.group_nodes = 1;
  o.outer_gossip = true;
  CHECK(local_sgd_unavailable(o, 3).value().find("not a power of 2") != std::string::npos);
  o.outer_gossip = false;
  o.sync = OuterSync::streaming;
  o.fragments = 4;
  o.overlap_steps = 3;
  CHECK(local_sgd_unavailable(o, 2).value() ==
        "an overlap of 3 inner steps is more than the 2 steps between fragments (10 / 4)");
}

TEST_CASE("DiLoCo through the evaluator: the outer state in memory, quantiles of the round's steps", "[local-sgd]") {
  static const ModelSpec model = *zoo_model("resnet50");
  Setup s;
  s.cluster = io::load_profile("dgx-a100");
  s.cluster.nodes = 4;
  s.model = &model;
  s.dtype = DType::bf16;
  s.local_sgd.inner_steps = 20;
  Evaluator e(s);
  const SchemeOutcome ar = e.evaluate(Scheme::allreduce());
  const SchemeOutcome d = e.evaluate(Scheme::diloco());
  const SchemeOutcome l = e.evaluate(Scheme::local_sgd());
  REQUIRE(d.available);
  // Anchor and momentum, fp32: 2 x 4 B per parameter more than All-Reduce; local SGD the anchor.
  const double params = static_cast<double>(model.total_params());
  CHECK_THAT(d.memory.optimizer_bytes - ar.memory.optimizer_bytes, WithinRel(8.0 * params, 1e-12));
  CHECK_THAT(l.memory.optimizer_bytes - ar.memory.optimizer_bytes, WithinRel(4.0 * params, 1e-12));
  // 19 of 20 steps are inner steps alone, so p50 and p90 are the inner step; the mean
  // carries the synchronisation.
  REQUIRE(d.local_sgd);
  CHECK(d.step_p50_s == d.local_sgd->inner_step_s);
  CHECK(d.step_p90_s == d.local_sgd->inner_step_s);
  CHECK(d.iteration.iteration_s > d.local_sgd->inner_step_s);
  // One group of every node: a round's steps run on one node's NVLink, so the inner step
  // is All-Reduce's on one node.
  Setup one = s;
  one.cluster.nodes = 1;
  CHECK_THAT(d.local_sgd->inner_step_s, WithinRel(Evaluator(one).evaluate(Scheme::allreduce()).iteration.iteration_s, 1e-12));
}

TEST_CASE("advise finds the fewest inner steps at which DiLoCo beats All-Reduce", "[local-sgd][advice]") {
  // ResNet-50 on four 4xA40 boxes with 25 Gbit/s Ethernet (the a40-ethernet-advise scenario).
  static const ModelSpec model = *zoo_model("resnet50");
  Setup s;
  s.cluster = io::load_profile("a40x4-eth25");
  s.model = &model;
  s.dtype = s.cluster.compute.dtype;
  Evaluator e(s);
  const Advice a = advise(e);
  REQUIRE(a.low_communication);
  const BreakEven& h = a.low_communication->inner_steps;
  REQUIRE(h.outcome == BreakEven::Outcome::crosses);
  // The break-even is a crossing: slower one step before it, faster at it.
  const auto per_step_at = [&](int inner_steps) {
    Setup at = s;
    at.local_sgd.inner_steps = inner_steps;
    return Evaluator(at).evaluate(Scheme::diloco()).iteration.iteration_s;
  };
  const double allreduce = a.allreduce.iteration.iteration_s;
  INFO("break-even H " << h.value);
  CHECK(per_step_at(static_cast<int>(h.value)) < allreduce);
  CHECK(per_step_at(static_cast<int>(h.last_below)) >= allreduce);
  CHECK(h.last_below == h.value - 1);
  // The advice evaluated DiLoCo at the setup's H (100), not at the last H it searched.
  CHECK(a.low_communication->diloco.local_sgd_options.inner_steps == 100);
  CHECK(e.setup().local_sgd.inner_steps == 100);
}
