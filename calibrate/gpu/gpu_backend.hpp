#pragma once
// The GPU backend: NCCL collectives, cuBLAS GEMMs, device copies and the spread of a fixed
// GPU workload, on every GPU of the run (see gpu_launch.hpp for how ranks start).
#include <memory>
#include <optional>
#include <vector>

#include "../options.hpp"
#include "../runner.hpp"
#include "gpu_launch.hpp"
#include "gpu_ops.hpp"

namespace dtperf::calibrate {

class GpuBackend : public Backend {
 public:
  explicit GpuBackend(GpuRank& rank) : rank_(rank), control_(rank) {}
  Control& control() override { return control_; }
  /// Splits a communicator for all_reduce entries (every world rank takes part in the split).
  std::unique_ptr<PointOps> ops_for(const PlanEntry& entry) override;
  std::vector<double> spread_samples_s(int warmup, int iterations) override;
  std::optional<ContentionSample> contention_sample(const Plan& plan) override;

 private:
  GpuRank& rank_;
  NcclControl control_;
};

/// Runs the GPU calibration on every rank of this process; returns the exit code.
int run_gpu_calibration(const Options& options);

}  // namespace dtperf::calibrate
