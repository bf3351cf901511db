// Gradient accumulation: K micro-steps per optimizer step, the first K - 1 compute-only
// (DDP's no_sync), in every engine, with the timelines written out by hand.
#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "dtperf/allreduce.hpp"
#include "dtperf/analysis/evaluator.hpp"
#include "dtperf/gossip.hpp"
#include "dtperf/io/profile_json.hpp"
#include "dtperf/scenario.hpp"
#include "dtperf/sharded.hpp"
#include "dtperf/zoo.hpp"
#include "toy_model.hpp"

using namespace dtperf;
using dtperf::test::fast_memory;
using dtperf::test::one_tensor;
using dtperf::test::two_single_gpu_nodes;
using Catch::Matchers::WithinRel;

namespace {

// The cluster: two nodes of one GPU (two_single_gpu_nodes), no latency, no dispatch floor,
// memory at 1 TB/s (fast_memory): the SGD step is 3 passes x 10 MB = 30 us; Decent-DP's
// mixing 9 passes = 90 us.

ComputeRequest micro_steps(int k) {
  ComputeRequest r;
  r.batch_per_gpu = 32;
  r.optimizer = Optimizer::sgd;
  r.accumulation_steps = k;
  return r;
}

}  // namespace

TEST_CASE("accumulation: K - 1 more forward and backward passes on one GPU", "[accumulation]") {
  const ModelSpec m = one_tensor();
  std::vector<double> backward(1);
  ComputeTimes t{backward};
  compute_times(m, fast_memory(), micro_steps(4), t);
  // 3 x (5 + 10) ms before the last micro-step; one step: 45 + 15 + 0.03 ms.
  CHECK_THAT(t.accumulation_s, WithinRel(45e-3, 1e-12));
  CHECK_THAT(t.iteration_s(), WithinRel(60.03e-3, 1e-12));
  // A global batch counts the optimizer step's samples: 1,024 over 8 GPUs and 4
  // micro-steps is 32 per micro-step.
  WorkloadOptions w;
  w.global_batch = 1024;
  w.accumulation_steps = 4;
  CHECK(compute_request(m, w, 8).batch_per_gpu == 32.0);
  CHECK(compute_request(m, w, 8).samples_per_gpu_per_step() == 128.0);
}

TEST_CASE("accumulation with All-Reduce: compute-only micro-steps, then the usual iteration",
          "[accumulation][allreduce]") {
  const ModelSpec m = one_tensor();
  AllReducePredictor p(m);
  AllReduceScenario s;
  s.network = two_single_gpu_nodes(1e9);
  s.compute = fast_memory();
  s.compute.interference_factor = 1.5;  // contention only while the all-reduce runs
  s.options.framework_copies = false;
  s.request = micro_steps(1);
  const IterationResult one = p.predict(s);
  s.request = micro_steps(3);
  const IterationResult three = p.predict(s);
  // Two micro-steps of 15 ms that communicate nothing, so nothing slows them down.
  CHECK_THAT(three.accumulation_s, WithinRel(30e-3, 1e-12));
  CHECK_THAT(three.iteration_s, WithinRel(one.iteration_s + 30e-3, 1e-12));
  CHECK_THAT(three.exposed_comm_s, WithinRel(one.exposed_comm_s, 1e-9));
  CHECK(three.inter_bytes_per_node == one.inter_bytes_per_node);  // one all-reduce per step
  // Throughput counts all three micro-batches: 2 GPUs x 3 x 32 samples per step.
  CHECK_THAT(three.throughput_samples_per_s, WithinRel(2 * 96 / three.iteration_s, 1e-12));
  CHECK_THAT(three.accumulation_s + three.forward_s + three.backward_s + three.exposed_comm_s + three.optimizer_s,
             WithinRel(three.iteration_s, 1e-9));
}

TEST_CASE("accumulation with gossip: the exchange hides behind the extra micro-steps", "[accumulation][gossip]") {
  const ModelSpec m = one_tensor();
  GossipPredictor p(m, compile_schedule(make_topology("ring", 2, 1)));
  GossipScenario s;
  s.network = two_single_gpu_nodes(0.5e9);  // exchange 10 MB / 0.5 GB/s = 20 ms
  s.compute = fast_memory();
  s.request = micro_steps(1);
  // Without accumulation the exchange paces the run: T = X + mix + step = 20.12 ms.
  CHECK_THAT(p.predict(s).iteration.iteration_s, WithinRel(20.12e-3, 1e-9));
  // With two micro-steps, L(t) = L(t-1) + max(15 + F + B, X) + mix + step: the 20 ms
  // exchange ends inside the 30 ms of compute, T = 30.12 ms and nothing waits.
  s.request = micro_steps(2);
  const GossipResult& two = p.predict(s);
  CHECK_THAT(two.iteration.iteration_s, WithinRel(30.12e-3, 1e-9));
  CHECK(two.iteration.exposed_comm_s < 1e-12);
  CHECK_THAT(two.iteration.accumulation_s, WithinRel(15e-3, 1e-9));
  // A slower link, X = 50 ms: T = 50.12 ms, of which 50 - 30 = 20 ms waiting.
  s.network = two_single_gpu_nodes(0.2e9);
  const GossipResult& slow = p.predict(s);
  CHECK_THAT(slow.iteration.iteration_s, WithinRel(50.12e-3, 1e-9));
  CHECK_THAT(slow.iteration.exposed_comm_s, WithinRel(20e-3, 1e-9));
}

TEST_CASE("accumulation with ZeRO and FSDP: who communicates in every micro-step", "[accumulation][sharded]") {
  const ModelSpec m = one_tensor();
  ShardedScenario s;
  s.network = two_single_gpu_nodes(1e9);  // RS and AG of 10 MB on two ranks: 5 MB each way, 5 ms
  s.param_network = s.network;
  s.compute = fast_memory();
  s.request = micro_steps(1);
  const auto run = [&](Sharding sharding, int k) {
    s.sharding = sharding;
    s.request = micro_steps(k);
    return predict_sharded(m, s);
  };
  // One unit. ZeRO, one micro-step: F 5, B 10, RS 5 (exposed), step 0.03 / 2, AG 5 ms.
  const double step = 0.03e-3 / 2.0;
  CHECK_THAT(run(Sharding::zero2, 1).iteration_s, WithinRel(5e-3 + 10e-3 + 5e-3 + step + 5e-3, 1e-9));
  // ZeRO-1 reduces once, after the last micro-step: one 15 ms micro-step more.
  CHECK_THAT(run(Sharding::zero1, 2).iteration_s, WithinRel(15e-3 + 25e-3 + step, 1e-9));
  CHECK_THAT(run(Sharding::zero1, 2).comm_busy_s, WithinRel(10e-3, 1e-9));
  // ZeRO-2 reduce-scatters in every micro-step: RS(1) runs from 15 to 20 ms beside the
  // second micro-step's compute (15 to 30 ms), RS(2) from 30 to 35; step; AG 5 ms.
  CHECK_THAT(run(Sharding::zero2, 2).iteration_s, WithinRel(35e-3 + step + 5e-3, 1e-9));
  CHECK_THAT(run(Sharding::zero2, 2).comm_busy_s, WithinRel(15e-3, 1e-9));
  // FSDP gathers before every forward and backward... with one unit, backward keeps the
  // forward's gather: AG 0-5, F 5-10, B 10-20, RS 20-25; the second micro-step's AG is
  // issued at 20 and queues behind the RS: 25-30, F 30-35, B 35-45, RS 45-50; step.
  const IterationResult fsdp = run(Sharding::fsdp, 2);
  CHECK_THAT(fsdp.iteration_s, WithinRel(50e-3 + step, 1e-9));
  CHECK_THAT(fsdp.comm_busy_s, WithinRel(20e-3, 1e-9));
  CHECK_THAT(fsdp.accumulation_s, WithinRel(15e-3, 1e-9));
  CHECK_THAT(fsdp.exposed_comm_s, WithinRel(50e-3 - 30e-3, 1e-9));
}

TEST_CASE("accumulation through the evaluator: every scheme's throughput counts K micro-batches",
          "[accumulation]") {
  static const ModelSpec model = *zoo_model("resnet50");
  Setup s;
  s.cluster = io::load_profile("p3dn-24xlarge");
  s.model = &model;
  s.workload.batch_per_gpu = 32;
  Evaluator one(s);
  s.workload.accumulation_steps = 4;
  Evaluator four(s);
  for (const Scheme& scheme : {Scheme::allreduce(), Scheme::gossip("alternating-exp-ring"), Scheme::sgp(),
                               Scheme::sharded(Sharding::fsdp), Scheme::local_sgd()}) {
    INFO(scheme.name());
    const IterationResult a = one.evaluate(scheme).iteration;
    const IterationResult b = four.evaluate(scheme).iteration;
    CHECK(b.iteration_s > a.iteration_s);
    CHECK_THAT(b.throughput_samples_per_s, WithinRel(s.cluster.ranks() * 128.0 / b.iteration_s, 1e-9));
    // Communication per optimizer step is amortised over 4 micro-batches: never a lower
    // throughput than one micro-step per step, unless it communicates every micro-step.
    if (scheme.kind != Scheme::Kind::sharded) CHECK(b.throughput_samples_per_s >= a.throughput_samples_per_s);
  }
}
