// All-Reduce data parallelism: bucketing (DDP, Horovod), the FIFO timeline overlapped
// with backward, interference, traffic accounting, and that evaluation allocates nothing.
#include <catch2/catch.hpp>

#include "alloc_counter.hpp"
#include "dtperf/allreduce.hpp"
#include "toy_model.hpp"

using namespace dtperf;
using Catch::Matchers::WithinRel;

namespace {

// Four tensors of 10 MB (2.5 M fp32 params), each with 10 ms of measured backward.
ModelSpec four_tensors() { return test::ten_mb_tensors(4); }

// Two nodes of one GPU, one NIC of 80 Gbit/s = 10 GB/s, no latency: all-reducing S bytes
// over the pair costs 2(2-1)/2 x S / 10 GB/s = S / 10 GB/s (10 MB: 1 ms). The framework's
// bucket copies are off here (their own test below switches them on).
AllReduceScenario two_ranks() {
  AllReduceScenario s;
  s.network.nodes = 2;
  s.network.gpus_per_node = 1;
  s.network.intra_bytes_per_s = 100e9;
  s.network.nics_per_node = 1;
  s.network.nic_line_bytes_per_s = 10e9;
  s.compute.kernel_overhead_s = 0.0;
  s.compute.memory_bytes_per_s = 1e12;
  s.request.batch_per_gpu = 32;
  s.request.optimizer = Optimizer::sgd_momentum;
  s.options.algorithm = Algorithm::ring;
  s.options.framework_copies = false;
  return s;
}

}  // namespace

TEST_CASE("DDP buckets close at the cap, the first one at 1 MiB", "[allreduce][buckets]") {
  const ModelSpec m = four_tensors();
  const std::vector<double> backward(4, 10e-3);
  std::vector<Bucket> buckets(4);
  // 10 MB >= 1 MiB closes the first bucket at once; then 10 + 10 MB < 25 MiB, and the
  // fourth tensor brings 30 MB >= 26.2 MB.
  const std::size_t n = make_buckets(m, backward, AllReduceOptions{}, buckets);
  REQUIRE(n == 2);
  CHECK(buckets[0].last_tensor == 0);
  CHECK(buckets[0].bytes == 10e6);
  CHECK(buckets[1].last_tensor == 3);
  CHECK(buckets[1].bytes == 30e6);
}

TEST_CASE("Horovod fusion emits a bucket every cycle of backward time", "[allreduce][buckets]") {
  const ModelSpec m = four_tensors();
  std::vector<double> backward(4, 2e-3);
  std::vector<Bucket> buckets(4);
  AllReduceOptions options;
  options.bucketing = Bucketing::horovod;
  // 2 ms per tensor: 4 ms after two tensors (< 5 ms), 6 ms after three => emit; the
  // fourth is flushed at the end of backward.
  REQUIRE(make_buckets(m, backward, options, buckets) == 2);
  CHECK(buckets[0].last_tensor == 2);
  CHECK(buckets[1].last_tensor == 3);
  // A 64 MiB buffer fills first when tensors are large.
  options.fusion_buffer_bytes = 15e6;
  REQUIRE(make_buckets(m, backward, options, buckets) == 2);
  CHECK(buckets[0].last_tensor == 1);
}

TEST_CASE("one predictor, its bucketing changed between calls, predicts as a fresh one", "[allreduce][buckets]") {
  const ModelSpec m = four_tensors();
  AllReducePredictor kept(m);
  const auto fresh = [&](const AllReduceScenario& s) {
    AllReducePredictor p(m);
    return p.predict(s);
  };
  AllReduceScenario ddp = two_ranks();  // buckets of 10 MB and 30 MB (above)
  AllReduceScenario one_bucket = ddp;
  one_bucket.options.first_bucket_cap_bytes = one_bucket.options.bucket_cap_bytes = 100e6;  // 40 MB at the end
  AllReduceScenario horovod = ddp;  // 10 ms of backward per tensor > the 5 ms cycle: 4 buckets
  horovod.options.bucketing = Bucketing::horovod;
  AllReduceScenario slower = ddp;  // the same buckets, each all-reduce twice as long
  slower.network.nic_line_bytes_per_s = 5e9;
  for (const AllReduceScenario* s : {&ddp, &ddp, &one_bucket, &ddp, &horovod, &slower, &ddp}) {
    const IterationResult got = kept.predict(*s);
    const IterationResult want = fresh(*s);
    CHECK(got.iteration_s == want.iteration_s);
    CHECK(got.exposed_comm_s == want.exposed_comm_s);
    CHECK(kept.last_buckets().size() == (s == &one_bucket ? 1u : s == &horovod ? 4u : 2u));
  }
}

TEST_CASE("all-reduce overlaps the remaining backward; the tail is exposed", "[allreduce][timeline]") {
  const ModelSpec m = four_tensors();
  AllReducePredictor predictor(m);
  const IterationResult r = predictor.predict(two_ranks());
  // Buckets: 10 MB ready at 10 ms (comm 10-11 ms) and 30 MB ready at 40 ms (40-43 ms).
  CHECK(r.buckets == 2);
  CHECK_THAT(r.backward_s, WithinRel(40e-3, 1e-12));
  CHECK_THAT(r.exposed_comm_s, WithinRel(3e-3, 1e-9));
  CHECK_THAT(r.comm_busy_s, WithinRel(4e-3, 1e-9));
  // Forward is half the measured backward: 20 ms. Momentum SGD: 5 passes x 40 MB at 1 TB/s.
  CHECK_THAT(r.forward_s, WithinRel(20e-3, 1e-12));
  CHECK_THAT(r.optimizer_s, WithinRel(0.2e-3, 1e-9));
  CHECK_THAT(r.iteration_s, WithinRel(20e-3 + 40e-3 + 3e-3 + 0.2e-3, 1e-9));
  CHECK_THAT(r.single_gpu_iteration_s, WithinRel(60.2e-3, 1e-9));
  CHECK_THAT(r.scaling_factor, WithinRel(60.2 / 63.2, 1e-9));
  // 2 GPUs x 32 samples per 63.2 ms.
  CHECK_THAT(r.throughput_samples_per_s, WithinRel(64 / 63.2e-3, 1e-9));
  // Each bucket puts S through each node's NIC: 40 MB per iteration, over 10 GB/s x 63.2 ms.
  CHECK_THAT(r.inter_bytes_per_node, WithinRel(40e6, 1e-12));
  CHECK_THAT(r.nic_utilization, WithinRel(40e6 / (10e9 * 63.2e-3), 1e-9));
}

TEST_CASE("a FIFO stream queues buckets that arrive while it is busy", "[allreduce][timeline]") {
  const ModelSpec m = four_tensors();
  AllReduceScenario s = two_ranks();
  s.options.bucketing = Bucketing::horovod;  // one bucket per 10 ms tensor
  s.network.nic_line_bytes_per_s = 0.5e9;    // 10 MB now takes 20 ms
  AllReducePredictor predictor(m);
  const IterationResult r = predictor.predict(s);
  // Ready at 10, 20, 30, 40 ms; each takes 20 ms: 10-30, 30-50, 50-70, 70-90 ms.
  CHECK(r.buckets == 4);
  CHECK_THAT(r.exposed_comm_s, WithinRel(50e-3, 1e-9));
}

TEST_CASE("interference slows compute only while communication runs", "[allreduce][interference]") {
  const ModelSpec m = four_tensors();
  AllReduceScenario s = two_ranks();
  s.compute.interference_factor = 1.5;
  AllReducePredictor predictor(m);
  const IterationResult r = predictor.predict(s);
  // Tensor 1 starts at 10 ms beside 1 ms of communication: 1 ms at 2/3 speed does 2/3 ms
  // of work, the remaining 9 1/3 ms run at full speed: backward ends at 40 1/3 ms.
  CHECK_THAT(r.backward_s, WithinRel(40e-3 + 1e-3 / 3, 1e-9));
  CHECK_THAT(r.exposed_comm_s, WithinRel(3e-3, 1e-9));
  // One GPU has no communication and no interference.
  s.network.nodes = 1;
  CHECK_THAT(predictor.predict(s).backward_s, WithinRel(40e-3, 1e-12));
}

TEST_CASE("communication runs slower while backward runs beside it", "[allreduce][contention]") {
  const ModelSpec m = four_tensors();
  AllReduceScenario s = two_ranks();
  s.compute.comm_interference_factor = 2.0;
  AllReducePredictor predictor(m);
  const IterationResult r = predictor.predict(s);
  // Bucket 1 (10 MB, 1 ms of work) starts at 10 ms while 30 ms of backward remain: at half
  // speed it takes 2 ms (10-12 ms). Bucket 2 (30 MB, 3 ms) starts at 40 ms when backward
  // has ended: full speed, 40-43 ms. The exposed tail stays 3 ms; the stream is busy 5 ms.
  CHECK_THAT(r.comm_busy_s, WithinRel(4e-3, 1e-9));  // the work, not the stretched time
  CHECK_THAT(r.exposed_comm_s, WithinRel(3e-3, 1e-9));
  // A slow first bucket that outlasts backward: 0.5 GB/s makes 10 MB 20 ms of work. At
  // half speed for the 30 ms of remaining backward it does 15 ms of work (10-40 ms), then
  // 5 ms at full speed (40-45 ms); bucket 2 (60 ms of work) runs 45-105 ms alone.
  s.network.nic_line_bytes_per_s = 0.5e9;
  CHECK_THAT(predictor.predict(s).exposed_comm_s, WithinRel(105e-3 - 40e-3, 1e-9));
}

TEST_CASE("no contention gives exactly the uncontended timeline", "[allreduce][contention]") {
  const ModelSpec m = four_tensors();
  AllReduceScenario s = two_ranks();
  AllReducePredictor predictor(m);
  const IterationResult plain = predictor.predict(s);
  s.compute.interference_factor = 1.0;
  s.compute.comm_interference_factor = 1.0;
  s.compute.iteration_overhead_s = 0.0;
  const IterationResult same = predictor.predict(s);
  CHECK(same.iteration_s == plain.iteration_s);
  CHECK(same.exposed_comm_s == plain.exposed_comm_s);
}

TEST_CASE("the framework copies each bucket in and out; a fixed overhead adds to every iteration",
          "[allreduce][overheads]") {
  const ModelSpec m = four_tensors();
  AllReduceScenario s = two_ranks();
  s.options.framework_copies = true;
  s.compute.iteration_overhead_s = 5e-3;
  AllReducePredictor predictor(m);
  const IterationResult r = predictor.predict(s);
  // Copies: 2 passes over the bucket at 1 TB/s: 10 MB -> 20 us, 30 MB -> 60 us.
  // From the start of backward: bucket 1 ready at 10.02 ms, all-reduce 1 ms + copy out
  // 0.02 ms -> 11.04 ms.
  // Backward: 40 ms + 0.02 + 0.06 ms of copies in = 40.08 ms; bucket 2 ready at 60.08 ms
  // (after a 20 ms forward), stream 60.08 + 3 + 0.06 = 63.14 ms: exposed 3.06 ms.
  CHECK_THAT(r.backward_s, WithinRel(40.08e-3, 1e-9));
  CHECK_THAT(r.exposed_comm_s, WithinRel(3.06e-3, 1e-9));
  CHECK_THAT(r.overhead_s, WithinRel(5e-3, 1e-12));
  CHECK_THAT(r.iteration_s, WithinRel(20e-3 + 40.08e-3 + 3.06e-3 + 0.2e-3 + 5e-3, 1e-9));
  // One GPU is not distributed: no copies, no overhead, scaling factor one.
  s.network.nodes = 1;
  const IterationResult one = predictor.predict(s);
  CHECK(one.overhead_s == 0.0);
  CHECK(one.scaling_factor == 1.0);
}

TEST_CASE("crossing nodes adds its own fixed time; two ranks on one node do not", "[allreduce][overheads]") {
  const ModelSpec m = four_tensors();
  AllReduceScenario s = two_ranks();  // 2 nodes x 1 GPU
  s.compute.iteration_overhead_s = 5e-3;
  s.compute.cross_node_overhead_s = 3e-3;
  AllReducePredictor predictor(m);
  const IterationResult across = predictor.predict(s);
  CHECK_THAT(across.overhead_s, WithinRel(5e-3 + 3e-3, 1e-12));
  s.network.nodes = 1;
  s.network.gpus_per_node = 2;
  const IterationResult inside = predictor.predict(s);
  CHECK_THAT(inside.overhead_s, WithinRel(5e-3, 1e-12));
}

TEST_CASE("one GPU has no communication and a scaling factor of one", "[allreduce]") {
  const ModelSpec m = four_tensors();
  AllReduceScenario s = two_ranks();
  s.network.nodes = 1;
  AllReducePredictor predictor(m);
  const IterationResult r = predictor.predict(s);
  CHECK(r.comm_busy_s == 0.0);
  CHECK(r.exposed_comm_s == 0.0);
  CHECK(r.scaling_factor == 1.0);
  CHECK(r.nic_utilization == 0.0);
}

TEST_CASE("iteration time never grows with bandwidth", "[allreduce][property]") {
  const ModelSpec m = four_tensors();
  AllReduceScenario s = two_ranks();
  AllReducePredictor predictor(m);
  double previous = 1e9;
  for (double gbps : {1.0, 10.0, 25.0, 100.0, 400.0, 1e5}) {
    s.network.nic_line_bytes_per_s = gbps * 1e9 / 8;
    const double t = predictor.predict(s).iteration_s;
    CHECK(t <= previous);
    previous = t;
  }
  // At 100 Tbit/s only compute is left.
  CHECK_THAT(previous, WithinRel(60.2e-3, 1e-3));
}

TEST_CASE("predict allocates nothing once constructed", "[allreduce][alloc]") {
  const ModelSpec m = four_tensors();
  AllReducePredictor predictor(m);
  const AllReduceScenario s = two_ranks();
  predictor.predict(s);
  test::AllocationScope scope;
  double sum = 0.0;
  for (int i = 0; i < 100; ++i) sum += predictor.predict(s).iteration_s;
  CHECK(scope.allocations() == 0);
  CHECK(sum > 0.0);
}
