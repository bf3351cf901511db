// dtperf_bench: how fast the engine evaluates. Prints figures; asserts nothing.
//   predictions per second, ResNet-50 All-Reduce on 64 GPUs (8 x p3dn-24xlarge), one core
//   microseconds per evaluation, Transformer-base with AER on 1,024 GPUs (256 x 4xA100)
//   heap allocations inside the evaluation loops (must be 0)
#include <chrono>
#include <cstdio>

#include "../tests/alloc_counter.hpp"
#include "dtperf/allreduce.hpp"
#include "dtperf/gossip.hpp"
#include "dtperf/io/profile_json.hpp"
#include "dtperf/scenario.hpp"
#include "dtperf/zoo.hpp"

using namespace dtperf;
using Clock = std::chrono::steady_clock;

namespace {

void bench_allreduce_resnet50() {
  const ModelSpec model = *zoo_model("resnet50");
  const ClusterProfile profile = io::load_profile("p3dn-24xlarge");
  AllReduceScenario s;
  s.network = network_params(profile, 1.0, {});
  s.compute = compute_params(profile, profile.compute.dtype);
  s.request = compute_request(model, WorkloadOptions{}, profile.ranks());
  AllReducePredictor predictor(model);

  // Each evaluation changes the NIC rate so nothing can be hoisted out of the loop.
  const double base_rate = s.network.nic_line_bytes_per_s;
  double checksum = 0.0;
  for (int i = 0; i < 1000; ++i) checksum += predictor.predict(s).iteration_s;  // warm-up

  const int evaluations = 400'000;
  test::AllocationScope allocations;
  const auto start = Clock::now();
  for (int i = 0; i < evaluations; ++i) {
    s.network.nic_line_bytes_per_s = base_rate * (1.0 + 1e-6 * (i & 1023));
    checksum += predictor.predict(s).iteration_s;
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf("allreduce  resnet50 on 8 x p3dn-24xlarge (64 GPUs, %zu tensors, %d buckets):\n",
              model.tensors.size(), predictor.predict(s).buckets);
  std::printf("  %.0f predictions/s (%.3f us each, %d evaluations, one core)\n", evaluations / seconds,
              1e6 * seconds / evaluations, evaluations);
  std::printf("  heap allocations in the loop: %zu\n", allocations.allocations());
  std::printf("  (checksum %.6f)\n", checksum);
}

void bench_aer_1024() {
  const ModelSpec model = *zoo_model("transformer-base");
  ClusterProfile profile = io::load_profile("a100x4-ib100");
  profile.nodes = 256;
  GossipScenario s;
  s.network = network_params(profile, 1.0, {});
  s.compute = compute_params(profile, profile.compute.dtype);
  s.request = compute_request(model, WorkloadOptions{}, profile.ranks());

  const auto cold_start = Clock::now();
  const Topology topology = make_topology("alternating-exp-ring", profile.ranks(), profile.gpus_per_node);
  GossipPredictor predictor(model, compile_schedule(topology));
  double checksum = predictor.predict(s).iteration.iteration_s;
  const double cold_s = std::chrono::duration<double>(Clock::now() - cold_start).count();

  const double base_rate = s.network.nic_line_bytes_per_s;
  const int evaluations = 20'000;
  test::AllocationScope allocations;
  const auto start = Clock::now();
  for (int i = 0; i < evaluations; ++i) {
    s.network.nic_line_bytes_per_s = base_rate * (1.0 + 1e-6 * (i & 1023));
    checksum += predictor.predict(s).iteration.iteration_s;
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const GossipResult& r = predictor.predict(s);
  std::printf("gossip     transformer-base, alternating-exp-ring on 256 x a100x4-ib100 (1,024 GPUs, period %d,\n"
              "           %d rank classes, %d iterations simulated, %d buckets):\n",
              r.period, r.rank_classes, r.iterations_simulated, r.iteration.buckets);
  std::printf("  %.2f us per evaluation (%d evaluations, one core)\n", 1e6 * seconds / evaluations, evaluations);
  std::printf("  %.2f ms cold: building the topology, compiling its schedule and the first evaluation\n", 1e3 * cold_s);
  std::printf("  heap allocations in the loop: %zu\n", allocations.allocations());
  std::printf("  (checksum %.6f)\n", checksum);
}

}  // namespace

int main() {
  bench_allreduce_resnet50();
  bench_aer_1024();
  return 0;
}
