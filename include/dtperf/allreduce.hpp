#pragma once
// All-Reduce data parallelism (MODELS.md section 4). Gradients are packed into
// buckets in the order backward produces them; each bucket is all-reduced by one
// FIFO communication stream as soon as it is complete, overlapping the rest of the
// backward pass; the optimizer step waits for the last all-reduce. Forward does not
// overlap communication. Every all-reduce is a barrier over all ranks.
//
//   iteration = forward + max(backward end, last all-reduce end) + optimizer step
//               + the framework's host work that nothing hides (distributed runs only:
//                 network.hpp's exposed_host_s, and any fixed what-if overhead)
// Each all-reduce also pays the framework's launch work (NetworkParams::launch_s) on the
// stream before its transfer.
//
// With gradient accumulation (K micro-steps, compute.hpp) the first K - 1 micro-steps only
// compute (DDP's no_sync; Horovod's backward_passes_per_step), and the last is the
// iteration above: iteration = (K - 1) x (forward + backward) + the above.
//
// Framework work on the critical path (`framework_copies`, on by default): DDP and
// Horovod copy each bucket's gradients into one flat buffer before the all-reduce and back
// out after it (2 memory passes each way over the bucket's bytes). The copy in runs on the
// compute stream once the bucket is ready, the copy out on the communication stream after
// the bucket's all-reduce. A single process (one GPU) has neither. Contention between
// overlapped compute and communication is documented in compute.hpp.
//
// Bucketing follows the two frameworks:
//   ddp      PyTorch DDP: a bucket closes once it holds >= cap bytes (25 MiB; the
//            first bucket 1 MiB, DDP's _DEFAULT_FIRST_BUCKET_BYTES); a tensor larger
//            than the cap gets its own bucket.
//   horovod  Tensor fusion: a bucket is emitted once the backward time accumulated
//            since the last one reaches the cycle time (5 ms) or its bytes reach the
//            fusion buffer (64 MiB), the rule of the [NET] simulator.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "dtperf/compute.hpp"
#include "dtperf/network.hpp"
#include "dtperf/result.hpp"
#include "dtperf/stats.hpp"
#include "dtperf/variability.hpp"
#include "dtperf/workload.hpp"
#include "dtperf/names.hpp"

namespace dtperf {

enum class Bucketing : std::uint8_t { ddp, horovod };
template <>
struct EnumNames<Bucketing> {
  static constexpr Named<Bucketing> table[] = {
      {Bucketing::ddp, "ddp"},
      {Bucketing::horovod, "horovod"},
  };
};

struct AllReduceOptions {
  Algorithm algorithm = Algorithm::automatic;
  Bucketing bucketing = Bucketing::ddp;
  double bucket_cap_bytes = kDefaultBucketCapBytes;
  double first_bucket_cap_bytes = 1024.0 * 1024;
  double fusion_cycle_s = 5e-3;
  double fusion_buffer_bytes = 64.0 * 1024 * 1024;
  bool framework_copies = true;  // off: the [NET] simulator's semantics

  bool operator==(const AllReduceOptions&) const = default;
};

/// One bucket: the index of its last tensor (it is ready when that gradient is) and
/// its bytes.
struct Bucket {
  std::uint32_t last_tensor = 0;
  double bytes = 0.0;
};

/// Fills `out` (capacity >= tensors) and returns the number of buckets. Pure.
std::size_t make_buckets(const ModelSpec& model, std::span<const double> backward_s,
                         const AllReduceOptions& options, std::span<Bucket> out);

/// Everything one All-Reduce prediction needs besides the model.
struct AllReduceScenario {
  NetworkParams network;
  ComputeParams compute;
  ComputeRequest request;
  AllReduceOptions options;
};

/// Evaluates All-Reduce scenarios for one model. Construction sizes the scratch
/// buffers; `predict` then allocates nothing and may be called any number of times.
///
/// With variable compute every rank runs its own forward and backward (scaled by its
/// factor of the iteration); each bucket's all-reduce starts once the bucket is ready on
/// every rank (a global barrier per bucket), and the iteration ends for everyone with the
/// last all-reduce and the optimizer step. Iterations are independent, so the K
/// iterations need no warm-up. With no variability this is the deterministic
/// prediction, bit for bit.
class AllReducePredictor {
 public:
  explicit AllReducePredictor(const ModelSpec& model);

  IterationResult predict(const AllReduceScenario& scenario);
  /// Sizes per-rank buffers on first use for a cluster size; then allocates nothing.
  const VariabilityOutcome& predict(const AllReduceScenario& scenario, const Variability& variability);

  /// The work predict(scenario, variability) will do (variability.hpp), for the scenario
  /// of the last `predict` call (its buckets): every rank computes every bucket in each
  /// measured iteration (the warm-up only draws factors).
  SimulationWork variable_work(const AllReduceScenario& scenario, const Variability& variability) const;

  /// The per-tensor backward times and buckets of the last `predict` call.
  std::span<const double> last_backward_s() const { return backward_s_; }
  std::span<const Bucket> last_buckets() const { return {buckets_.data(), bucket_count_}; }

 private:
  struct Iteration {
    double end_s = 0.0;             // from the start of forward to the end of the optimizer step
    double compute_end_max_s = 0.0; // the slowest rank's end of backward
    double comm_end_s = 0.0;        // the last all-reduce's end
  };
  void prepare(const AllReduceScenario& s);
  Iteration run_iteration(std::span<const double> factors, std::span<double> compute_end_s) const;
  /// The same where nothing slows compute or the all-reduce (uncontended_: every built-in
  /// profile): the latest rank's clock alone sets the ready times, O(buckets + ranks).
  Iteration run_iteration_uncontended(std::span<const double> factors, std::span<double> compute_end_s) const;

  const ModelSpec& model_;
  std::vector<double> backward_s_;
  ComputeTimesCache compute_cache_;  // fills backward_s_
  std::vector<Bucket> buckets_;
  std::size_t bucket_count_ = 0;
  // The options DDP's buckets were last made with: DDP fills them by bytes alone, so the
  // same options give the same buckets (Horovod's fusion cycle reads compute times: made
  // on every call).
  std::optional<AllReduceOptions> ddp_buckets_of_;
  // Per bucket: backward segment, all-reduce cost and traffic (of the last prepare).
  std::vector<double> segment_s_;
  std::vector<double> cost_s_;
  std::vector<double> intra_bytes_;
  std::vector<double> inter_bytes_;
  std::vector<double> copy_in_s_;      // per bucket, compute stream
  std::vector<double> copy_out_s_;     // per bucket, communication stream
  // Per bucket: compute beside its all-reduce, and the all-reduce beside compute
  // (contention.hpp: a host transport's share depends on the bucket's bytes and time).
  std::vector<double> interference_;
  std::vector<double> comm_factor_;
  std::vector<double> remaining_s_;    // per bucket: backward work (and copies) after it
  double overhead_s_ = 0.0;
  bool uncontended_ = true;        // every bucket's interference and comm factor 1
  double backward_work_s_ = 0.0;   // accumulation, forward and every segment
  double copies_in_s_ = 0.0;       // every bucket's copy on the compute stream
  double launch_s_ = 0.0;  // of each bucket's cost: the framework's launch work, not the NICs
  double forward_s_ = 0.0;
  double accumulation_s_ = 0.0;  // the K - 1 compute-only micro-steps before the last
  double optimizer_s_ = 0.0;
  double single_gpu_s_ = 0.0;
  bool distributed_ = false;
  // Per rank (variable compute).
  std::vector<double> factors_;
  std::vector<double> compute_end_s_;
  std::vector<double> idle_sum_s_;
  DurationHistogram durations_;
  VariabilityOutcome variable_;
};

}  // namespace dtperf
