#pragma once
// Runs a plan on one rank through a backend and collects the raw results on rank 0.
// Every rank walks the same plan in the same order; the backend supplies the operations.
#include <memory>
#include <vector>

#include "plan.hpp"
#include "raw_format.hpp"
#include "sweep.hpp"

namespace dtperf::calibrate {

class Backend {
 public:
  virtual ~Backend() = default;
  virtual Control& control() = 0;
  /// Called on every rank for every entry, in plan order (collective set-up such as a
  /// communicator split happens here); null when this rank idles during the entry.
  virtual std::unique_ptr<PointOps> ops_for(const PlanEntry& entry) = 0;
  /// Seconds of each of `iterations` runs of the fixed workload, after `warmup` runs.
  virtual std::vector<double> spread_samples_s(int warmup, int iterations) = 0;
};

/// Measures every entry of `plan` and the iteration spread. On rank 0 the collectives,
/// gemm, copy and iteration_spread lists of `run` are filled, and run.truncated is set when
/// the plan or the budget left points out; progress goes to stderr from rank 0.
void run_plan(const Plan& plan, Backend& backend, Budget& budget, RawRun& run);

}  // namespace dtperf::calibrate
