#pragma once
// Runs a plan on one rank through a backend and collects the raw results on rank 0.
// Every rank walks the same plan in the same order; the backend supplies the operations.
#include <memory>
#include <optional>
#include <vector>

#include "plan.hpp"
#include "raw_format.hpp"
#include "sweep.hpp"

namespace dtperf::calibrate {

/// One rank's contention timings, seconds per call (plan.hpp: kContentionGemm).
struct ContentionSample {
  double gemm_alone_s = 0.0, gemm_beside_s = 0.0;
  double collective_alone_s = 0.0, collective_beside_s = 0.0;
  bool covered = false;  // the other side ran through both timed spans
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual Control& control() = 0;
  /// Called on every rank for every entry, in plan order (collective set-up such as a
  /// communicator split happens here); null when this rank idles during the entry.
  virtual std::unique_ptr<PointOps> ops_for(const PlanEntry& entry) = 0;
  /// Seconds of each of `iterations` runs of the fixed workload, after `warmup` runs.
  virtual std::vector<double> spread_samples_s(int warmup, int iterations) = 0;
  /// The contention timings (every rank takes part); none where the backend has no GEMM.
  virtual std::optional<ContentionSample> contention_sample(const Plan&) { return std::nullopt; }
};

/// Measures every entry of `plan`, the contention (GPU plans) and the iteration spread. On
/// rank 0 the collectives, gemm, copy, contention and iteration_spread lists of `run` are
/// filled (`run`'s world must be set), and run.truncated is set when
/// the plan or the budget left points out; progress goes to stderr from rank 0.
void run_plan(const Plan& plan, Backend& backend, Budget& budget, RawRun& run);

}  // namespace dtperf::calibrate
