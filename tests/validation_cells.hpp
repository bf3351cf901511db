#pragma once
// The measured cells of [DEC] and [NET] and the protocols' fits, shared by the validation
// tests (test_validation_dec.cpp, test_validation_net.cpp, test_validation_bands.cpp).
//
// [DEC] (Wang et al., ICLR 2025): 4xA100 nodes (a100x4-ib100), Transformer-base, 25,000
// tokens per iteration in total, fp16 compute, ms per iteration at 8, 16 and 32 GPUs;
// the fit sees the three All-Reduce cells only.
// [NET] (Zhang et al., NetAI 2020, Fig. 1 and 3): ResNet-50 on p3dn.24xlarge, Horovod
// fusion, single-GPU iteration 128.09 ms, scaling factor % per cell; the fit sees the 8-
// and 16-GPU runs at 100 Gbit/s only.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "dtperf/analysis/fit_runs.hpp"
#include "dtperf/io/model_files.hpp"
#include "dtperf/io/profile_json.hpp"
#include "dtperf/zoo.hpp"

namespace dtperf::validation {

// ---- [DEC] ----------------------------------------------------------------------------

inline MeasuredRun dec_run(Scheme scheme, int nodes, double measured_ms) {
  MeasuredRun r;
  r.label = scheme.name() + "-" + std::to_string(4 * nodes);
  r.file = r.label;
  r.config.scheme = std::move(scheme);
  r.config.cluster.nodes = nodes;
  r.config.workload.global_batch = 25000;
  r.measured.iteration_s = measured_ms * 1e-3;
  return r;
}

// The measured decentralized cells (ms at 8, 16, 32 GPUs), which the fit never sees.
struct DecRow {
  Scheme scheme;
  double measured_ms[3];
};
inline const DecRow kDecHeldOut[] = {{Scheme::gossip("one-peer-exp"), {63.4, 46.8, 44.7}},
                                     {Scheme::gossip("alternating-exp-ring"), {61.7, 45.8, 43.7}},
                                     {Scheme::sgp(), {69.4, 53.0, 50.7}}};

// The protocol's fit: the datasheet profile as priors, the three All-Reduce cells.
struct DecFit {
  ModelSpec model = *zoo_model("transformer-base");
  Setup setup;
  RunsFit fit;
  DecFit() {
    setup.cluster = io::load_profile("a100x4-ib100");
    setup.model = &model;
    setup.dtype = DType::fp16;
    const double allreduce_ms[3] = {73.0, 54.8, 51.5};
    std::vector<MeasuredRun> fitted_on;
    for (int i = 0; i < 3; ++i) fitted_on.push_back(dec_run(Scheme::allreduce(), 2 << i, allreduce_ms[i]));
    fit = fit_runs(setup, fitted_on);
  }
  DecFit(const DecFit&) = delete;  // setup points at model
  DecFit& operator=(const DecFit&) = delete;
};

// ---- [NET] ----------------------------------------------------------------------------

inline const std::string kNetData = std::string(DTPERF_VALIDATION_DATA) + "/training-bottleneck/";

inline void require_net_data() {
  INFO("the [NET] logs are not at " << kNetData << " (validation/data/training-bottleneck in the repository)");
  REQUIRE(std::filesystem::exists(kNetData + "resnet50.bk.log"));
}

inline constexpr double kNetSingleGpuMs = 128.09;

inline MeasuredRun net_run(int gpus, double gbps, double percent) {
  MeasuredRun r;
  r.label = std::to_string(gpus) + " GPUs at " + std::to_string(static_cast<int>(gbps)) + " Gbit/s";
  r.file = r.label;
  r.config.cluster.nodes = gpus / 8;
  r.config.cluster.nic_gbps = gbps;
  r.config.allreduce.bucketing = Bucketing::horovod;
  // NCCL 2.4 (the runs used 2.4.8) took its trees at every size on two nodes (as NCCL's
  // developers state for 2.4.7); on more nodes its own choice.
  if (gpus == 16) r.config.allreduce.algorithm = Algorithm::tree;
  r.config.workload.single_gpu_iteration_s = kNetSingleGpuMs * 1e-3;
  r.measured.iteration_s = kNetSingleGpuMs * 1e-3 / (percent / 100.0);
  return r;
}

// The measured scaling factors (%) the fit never sees.
struct NetCell {
  int gpus;
  double gbps;
  double percent;
};
inline const NetCell kNetHeldOut[] = {{16, 1, 13},  {16, 10, 68},  {16, 25, 75},  {16, 40, 75},  {32, 1, 8},
                                      {32, 10, 50}, {32, 25, 73},  {32, 40, 74},  {32, 100, 74}, {64, 1, 7.5},
                                      {64, 10, 47}, {64, 25, 69},  {64, 40, 71},  {64, 100, 71}};

// The runs the protocol fits: 8 and 16 GPUs at 100 Gbit/s.
inline std::vector<MeasuredRun> net_fitted_runs() { return {net_run(8, 100, 85), net_run(16, 100, 75)}; }

// The protocol's fit: the p3dn datasheet as priors, net_fitted_runs().
struct NetFit {
  ModelSpec model = io::read_timing_log(kNetData + "resnet50.bk.log");
  Setup setup;
  RunsFit fit;
  NetFit() {
    setup.cluster = io::load_profile("p3dn-24xlarge");
    setup.model = &model;
    setup.dtype = DType::fp32;
    fit = fit_runs(setup, net_fitted_runs());
  }
  NetFit(const NetFit&) = delete;  // setup points at model
  NetFit& operator=(const NetFit&) = delete;
};

}  // namespace dtperf::validation
