// A program outside dtperf's tree that links the engine alone (no I/O, no JSON): the
// cluster is described in code, the model comes from the built-in zoo, and the engine
// compares All-Reduce with two gossip topologies across NIC rates.
//
// Build it against an installed dtperf (meson install):
//   meson setup build && ninja -C build && build/engine_example
// or by hand:  g++ -std=c++20 main.cpp $(pkg-config --cflags --libs --static dtperf-engine)
#include <cstdio>

#include <dtperf/analysis/evaluator.hpp>
#include <dtperf/zoo.hpp>

int main() {
  using namespace dtperf;

  // 8 nodes of 4 A100s (NVLink inside a node), one 100 Gbit/s NIC per node.
  ClusterProfile cluster;
  cluster.name = "my-a100-cluster";
  cluster.nodes = 8;
  cluster.gpus_per_node = 4;
  cluster.gpu.model = "A100-SXM4-40GB";
  cluster.gpu.peak_flops_per_s = {{DType::fp32, 19.5e12}, {DType::bf16, 312e12}};
  cluster.gpu.memory_bytes_per_s = 1555e9;
  cluster.intra = {"NVLink", 300e9, 2e-6, 0.8};
  cluster.inter.link = "InfiniBand HDR100";
  cluster.inter.nic_gbps = 100.0;
  cluster.inter.latency_s = 5e-6;
  cluster.inter.transport_efficiency = 0.9;
  cluster.compute.dtype = DType::bf16;

  const std::optional<ModelSpec> model = zoo_model("transformer-base");
  if (!model) return 1;
  Setup setup;
  setup.cluster = cluster;
  setup.model = &*model;  // the Setup refers to the model: keep it alive
  setup.dtype = DType::bf16;
  Evaluator evaluator(setup);

  std::printf("%s on %d x %d %s\n", model->name.c_str(), cluster.nodes, cluster.gpus_per_node, cluster.gpu.model.c_str());
  std::printf("%10s %22s %14s %10s\n", "NIC Gbit/s", "scheme", "iteration ms", "scaling %");
  for (const double gbps : {25.0, 100.0, 400.0}) {
    cluster.inter.nic_gbps = gbps;
    for (const Scheme& scheme : {Scheme::allreduce(), Scheme::gossip("ring"), Scheme::gossip("alternating-exp-ring")}) {
      const SchemeOutcome outcome = evaluator.evaluate_on(cluster, scheme);
      if (!outcome.available) {
        std::printf("%10.0f %22s %s\n", gbps, scheme.name().c_str(), outcome.unavailable_reason.c_str());
        continue;
      }
      std::printf("%10.0f %22s %14.2f %10.1f\n", gbps, scheme.name().c_str(), outcome.iteration.iteration_s * 1e3,
                  100.0 * outcome.iteration.scaling_factor);
    }
  }
  return 0;
}
