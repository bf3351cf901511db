// Validation against [NET] (Zhang et al., "Is Network the Bottleneck of Distributed
// Training?", arXiv 2006.10103). Their what-if simulator replays the measured per-layer
// backward log of one V100, fuses gradients as Horovod does (5 ms / 64 MiB), and charges
// each fused all-reduce 2(p-1)/p * 8S/B of line-rate ring transfer plus (p-1) GPU vector
// adds of S/p; the scaling factor is T / (T + overhead) with T the single-GPU iteration.
//
// Configured the same way (64 GPUs as 8 nodes x 8, line rate, no latency, measured
// vector-add cost), dtperf must reproduce the paper's ResNet-50 scaling factors (about 7,
// 54, 91, 99 and 99 % at 1, 10, 25, 40 and 100 Gbit/s) within 1 percentage point, and
// match a plain re-implementation of their loop to rounding error for all three logs.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "dtperf/allreduce.hpp"
#include "dtperf/analysis/fit_runs.hpp"
#include "dtperf/io/model_files.hpp"
#include "dtperf/io/profile_json.hpp"
#include "dtperf/scenario.hpp"
#include "validation_cells.hpp"

using namespace dtperf;

namespace {

const std::string& kData = validation::kNetData;

// The logs are in the repository (validation/data/SOURCES.md): missing, the test fails.
void require_data() { validation::require_net_data(); }

// The paper's single-GPU iteration times (their sim_with_compression_*.py).
struct Log {
  const char* name;
  double single_gpu_iteration_s;
};
const Log kLogs[] = {{"resnet50", 0.12808580219559176}, {"resnet101", 0.19200599479476405}, {"vgg16", 0.19452352295080985}};

AllReduceScenario net_scenario(double gbps, const ModelSpec& model, double single_gpu_iteration_s,
                               const std::vector<std::pair<double, double>>& vector_add) {
  ClusterOverrides o;
  o.nodes = 8;
  o.gpus_per_node = 8;
  o.nic_gbps = gbps;
  o.nics_per_node = 1;
  o.transport_efficiency = 1.0;
  o.host_gbps = 0.0;  // their simulator runs at line rate
  o.inter_latency_s = 0.0;
  o.intra_latency_s = 0.0;
  static ClusterProfile profile;
  profile = apply_overrides(io::load_profile("p3dn-24xlarge"), o);
  AllReduceScenario s;
  s.network = network_params(profile, 1.0, vector_add);
  s.compute = compute_params(profile, DType::fp32);
  WorkloadOptions w;
  w.single_gpu_iteration_s = single_gpu_iteration_s;
  s.request = compute_request(model, w, 64);
  s.options.algorithm = Algorithm::ring;
  s.options.bucketing = Bucketing::horovod;
  s.options.framework_copies = false;       // their simulator charges none
  s.compute.interference_factor = 1.0;      // nor contention
  s.compute.iteration_overhead_s = 0.0;     // nor overheads (the profile's are fitted to
  s.compute.cross_node_overhead_s = 0.0;    // the measured runs, which the simulator is not)
  return s;
}

// Their simulator's loop, written out plainly: fuse, queue, charge, measure the tail.
double net_overhead_s(const ModelSpec& model, double p, double bits_per_s,
                      const std::vector<std::pair<double, double>>& add) {
  const auto vec_add_s = [&](double bytes) {
    if (bytes <= add.front().first) return add.front().second;
    if (bytes >= add.back().first) return add.back().second;
    std::size_t i = 1;
    while (add[i].first < bytes) ++i;
    const double f = (bytes - add[i - 1].first) / (add[i].first - add[i - 1].first);
    return add[i - 1].second + f * (add[i].second - add[i - 1].second);
  };
  double clock = 0.0, since_emit = 0.0, buffer = 0.0, comm_end = 0.0;
  const auto emit = [&] {
    const double t = 2 * (buffer * 8 * (p - 1) / p) / bits_per_s + (p - 1) * vec_add_s(buffer / p);
    comm_end = std::max(comm_end, clock) + t;
    since_emit = 0.0;
    buffer = 0.0;
  };
  for (const auto& tensor : model.tensors) {
    const double wait = *tensor.measured_backward_s;
    clock += wait;
    since_emit += wait;
    buffer += static_cast<double>(tensor.params) * 4;
    if (since_emit >= 0.005 || buffer >= 64.0 * 1024 * 1024) emit();
  }
  if (buffer > 0) emit();
  return std::max(0.0, comm_end - clock);
}

}  // namespace

TEST_CASE("ResNet-50 scaling factors reproduce the [NET] simulation within 1 point", "[validation][net]") {
  require_data();
  const ModelSpec model = io::read_timing_log(kData + "resnet50.bk.log");
  const auto vector_add = io::read_reduction_log(kData + "cuda_vec_add.log");
  AllReducePredictor predictor(model);
  const struct {
    double gbps;
    double paper_percent;
  } points[] = {{1, 7}, {10, 54}, {25, 91}, {40, 99}, {100, 99}};
  for (const auto& point : points) {
    const IterationResult r = predictor.predict(net_scenario(point.gbps, model, 0.12808580219559176, vector_add));
    const double percent = 100.0 * r.scaling_factor;
    INFO(point.gbps << " Gbit/s: dtperf " << percent << " %, paper " << point.paper_percent << " %");
    CHECK(std::abs(percent - point.paper_percent) <= 1.0);
    // The single-GPU iteration is the measured one, so scaling = T / (T + overhead).
    CHECK(r.single_gpu_iteration_s == Approx(0.12808580219559176).epsilon(1e-12));
  }
}

TEST_CASE("the engine matches the [NET] simulator loop for every log and rate", "[validation][net]") {
  require_data();
  const auto vector_add = io::read_reduction_log(kData + "cuda_vec_add.log");
  for (const Log& log : kLogs) {
    const ModelSpec model = io::read_timing_log(kData + log.name + ".bk.log");
    AllReducePredictor predictor(model);
    for (double gbps : {1.0, 10.0, 25.0, 40.0, 100.0}) {
      const IterationResult r = predictor.predict(net_scenario(gbps, model, log.single_gpu_iteration_s, vector_add));
      const double overhead = net_overhead_s(model, 64, gbps * 1e9, vector_add);
      INFO(log.name << " at " << gbps << " Gbit/s");
      CHECK(r.exposed_comm_s == Approx(overhead).epsilon(1e-9).margin(1e-12));
      CHECK(r.scaling_factor ==
            Approx(log.single_gpu_iteration_s / (log.single_gpu_iteration_s + overhead)).epsilon(1e-9));
    }
  }
}

// Measured scaling, [NET] Fig. 1 and Fig. 3 (validation/data/training-bottleneck/README.md):
// ResNet-50, batch 32 per GPU, Horovod 0.18.2 with NCCL 2.4.8 over TCP on p3dn.24xlarge.
// Protocol: `dtperf fit --runs` on the 8- and 16-GPU runs at 100 Gbit/s only (the p3dn
// datasheet values as priors; the measured single-GPU iteration of 128.09 ms; Horovod
// fusion; the algorithm NCCL 2.4 ran: trees at every size on two nodes, its own choice on
// more); the fitted profile predicts every other cell. Bound, fixed before the result was
// known: within 5 percentage points of the measured scaling factor (128.09 ms /
// iteration), each cell.
//
// What the two runs show: host work the framework does not hide on one node (the fit
// spreads it over its per-tensor and per-byte terms, neither pinned alone) and more per
// byte once the ranks span nodes (pinned by the 16-GPU run); 25, 40 and 100 Gbit/s scale
// alike in Fig. 3, so that step is not bandwidth.
TEST_CASE("[NET]: fitted on 8 and 16 GPUs at 100 Gbit/s, the other measured scaling factors are predicted",
          "[validation][net]") {
  require_data();
  const validation::NetFit f;
  const Setup& setup = f.setup;
  const RunsFit& fit = f.fit;
  std::string table = "[NET] held-out cells (fitted on 8 and 16 GPUs at 100 Gbit/s), scaling factor %:\n";
  double worst = 0.0;
  for (const auto& c : validation::kNetHeldOut) {
    const MeasuredRun cell = validation::net_run(c.gpus, c.gbps, c.percent);
    const double predicted =
        100.0 * validation::kNetSingleGpuMs * 1e-3 / predict_run(setup, fit.fitted, cell).iteration_s;
    worst = std::max(worst, std::abs(predicted - c.percent));
    table += "  " + cell.label + ": measured " + std::to_string(c.percent) + ", predicted " + std::to_string(predicted) +
             "\n";
  }
  for (const auto& p : fit.parameters) table += "  " + std::string(name_of(p.parameter)) + " = " + std::to_string(p.value) + (p.identified ? "" : " (open)") + "\n";
  WARN(table << "worst difference " << worst << " points");
  CHECK(worst <= 5.0);
}
