// dtperf_bench: how fast the engine evaluates. Prints figures; asserts nothing.
//   predictions per second, ResNet-50 All-Reduce on 64 GPUs (8 x p3dn-24xlarge), one core
//   heap allocations inside the evaluation loop (must be 0)
#include <chrono>
#include <cstdio>

#include "../tests/alloc_counter.hpp"
#include "dtperf/allreduce.hpp"
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
  s.request = compute_request(model, WorkloadOptions{});
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

}  // namespace

int main() {
  bench_allreduce_resnet50();
  return 0;
}
