// dtperf_bench: how fast the engine evaluates. Prints figures; asserts nothing.
//   predictions per second, ResNet-50 All-Reduce on 64 GPUs (8 x p3dn-24xlarge), one core
//   microseconds per evaluation, Transformer-base with AER on 1,024 GPUs (256 x 4xA100)
//   heap allocations inside the evaluation loops (must be 0)
//   seconds and memory for 10,240 ranks x 1,000 iterations of variable compute, per topology
//   seconds for a 1,000,000-point sweep (ResNet-50 All-Reduce, 1,000 node counts x 1,000
//   NIC rates) rendered as CSV, on every core and on one
//   scale: the goals at 131,072 GPUs, advise at 1,024 and variable compute at 10,240,
//   each case in a fresh process with its time and peak memory (bench_scale.cpp)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "../tests/alloc_counter.hpp"
#include "bench_scale.hpp"
#include "dtperf/allreduce.hpp"
#include "dtperf/gossip.hpp"
#include "dtperf/io/profile_json.hpp"
#include "dtperf/io/sweep_rows.hpp"
#include "dtperf/scenario.hpp"
#include "dtperf/analysis/sweep.hpp"
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

void bench_variability(const char* topology_name, int ranks) {
  const ModelSpec model = *zoo_model("transformer-base");
  ClusterProfile profile = io::load_profile("a100x4-ib100");
  profile.nodes = ranks / profile.gpus_per_node;
  GossipScenario s;
  s.network = network_params(profile, 1.0, {});
  s.compute = compute_params(profile, profile.compute.dtype);
  s.request = compute_request(model, WorkloadOptions{}, profile.ranks());
  Variability v;
  v.law = NoiseLaw::normal;
  v.cv = 0.1;
  v.iterations = 1000;
  v.warmup_iterations = 50;

  if (const auto why = topology_unavailable(topology_name, ranks, profile.gpus_per_node)) {
    std::printf("  %-16s %6d ranks: not built: %s\n", topology_name, ranks, why->c_str());
    return;
  }
  const auto start = Clock::now();
  GossipPredictor predictor(model, compile_schedule(make_topology(topology_name, ranks, profile.gpus_per_node), false));
  const auto compiled = Clock::now();
  // The variable run starts with the deterministic one (its reference and warm-up length);
  // timed alone first to show the split.
  const int deterministic_iterations = predictor.predict(s).iterations_simulated;
  const auto deterministic = Clock::now();
  const GossipResult& r = predictor.predict(s, v);
  const auto done = Clock::now();
  std::printf("  %-16s %6d ranks: deterministic reference alone %.3f s (%d iterations)\n", topology_name, ranks,
              std::chrono::duration<double>(deterministic - compiled).count(), deterministic_iterations);
  std::printf("  %-16s %6d ranks: %.3f s for %d iterations (%d of them warm-up) + %.3f s compiling the schedule;"
              " state %.2f MiB (%.0f bytes per rank; `scale` measures each case's peak RSS in a fresh process);"
              " mean %.2f ms, p99 %.2f ms\n",
              topology_name, ranks, std::chrono::duration<double>(done - deterministic).count(), r.iterations_simulated,
              r.iterations_simulated - r.variability.iterations, std::chrono::duration<double>(compiled - start).count(),
              predictor.memory_bytes() / 1048576.0, static_cast<double>(predictor.memory_bytes()) / ranks,
              r.iteration.iteration_s * 1e3, r.variability.iteration_p99_s * 1e3);
}

}  // namespace

// This program's own path, to run a case of it in a fresh process.
std::string self_path(const char* argv0) {
  char buffer[4096];
  const ssize_t n = readlink("/proc/self/exe", buffer, sizeof buffer - 1);
  return n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : std::string(argv0);
}

// usage: dtperf_bench [allreduce | gossip | variability [TOPOLOGY ...] | sweep | scale]   (default: all)
void bench_sweep(int threads) {
  const ModelSpec model = *zoo_model("resnet50");
  Setup setup;
  setup.cluster = io::load_profile("p3dn-24xlarge");
  setup.model = &model;
  SweepAxes axes;
  for (int n = 1; n <= 1000; ++n) axes.nodes.push_back(n);
  for (int g = 1; g <= 1000; ++g) axes.nic_gbps.push_back(g);
  const SweepGrid grid(setup, axes);
  const io::SweepWriter csv(io::RowFormat::csv, grid);
  std::size_t bytes = 0;
  double checksum = 0.0;
  SweepRun run;
  run.threads = threads;
  run.render = [&](std::span<const SweepRow> rows, std::string& text) {
    for (const SweepRow& row : rows) csv.append(text, row);
  };
  run.sink = [&](std::span<const SweepRow> rows, const std::string& text) {
    bytes += text.size();
    for (const SweepRow& row : rows) checksum += row.iteration.iteration_s;
  };
  const auto start = Clock::now();
  run_sweep(grid, run);
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf("sweep      resnet50 all-reduce, %llu points (1,000 node counts x 1,000 NIC rates) as CSV, %d thread%s:\n",
              static_cast<unsigned long long>(grid.size()), threads, threads == 1 ? "" : "s");
  std::printf("  %.2f s (%.2f us per point), %.0f MB of CSV (checksum %.3f)\n", seconds, 1e6 * seconds / grid.size(),
              bytes * 1e-6, checksum);
}

int main(int argc, char** argv) {
  const std::string part = argc > 1 ? argv[1] : "";
  if (part == "gap" && argc == 5) return dtperf::bench::gap_case(argv[2], std::atoi(argv[3]), std::atoi(argv[4]));
  if (part.empty() || part == "allreduce") bench_allreduce_resnet50();
  if (part.empty() || part == "gossip") bench_aer_1024();
  if (part.empty() || part == "variability") {
    std::vector<std::string> topologies;
    for (int i = 2; i < argc; ++i) topologies.emplace_back(argv[i]);
    if (topologies.empty()) topologies = {"random-matching", "torus", "ring"};
    std::printf("variable compute (normal, CV 10 %%), transformer-base on 4xA100 nodes, 1,000 measured iterations:\n");
    for (const auto& topology : topologies) {
      bench_variability(topology.c_str(), 1024);
      bench_variability(topology.c_str(), 10240);
    }
  }
  if (part.empty() || part == "sweep") {
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    bench_sweep(cores);
    if (cores > 1) bench_sweep(1);
  }
  if (part.empty() || part == "scale") dtperf::bench::bench_scale(self_path(argv[0]), DTPERF_CLI);
  if (!part.empty() && part != "allreduce" && part != "gossip" && part != "variability" && part != "sweep" &&
      part != "scale") {
    std::fprintf(stderr, "usage: dtperf_bench [allreduce | gossip | variability [TOPOLOGY ...] | sweep | scale]\n");
    return 2;
  }
  return 0;
}
