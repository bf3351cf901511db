#pragma once
// What one prediction says about one training iteration. The table and the JSON of
// every command are printed from these structs and never recomputed.
#include <span>

namespace dtperf {

struct IterationResult {
  // Time per iteration, seconds.
  double iteration_s = 0.0;
  // Gradient accumulation: the K - 1 micro-steps before the last (forward and backward,
  // with the contention of whatever communication they overlap); 0 without.
  double accumulation_s = 0.0;
  double forward_s = 0.0;        // the last micro-step's (the only one without accumulation)
  double backward_s = 0.0;        // backward compute, including interference
  double exposed_comm_s = 0.0;    // time compute waits for communication
  double optimizer_s = 0.0;       // optimizer step (and, for gossip, the mixing)
  double overhead_s = 0.0;        // distributed runs: the framework's host work nothing hides, and any what-if
  double comm_busy_s = 0.0;       // time the communication stream is busy
  double nic_busy_s = 0.0;        // time the node's NICs carry traffic
  // Traffic per iteration, per direction.
  double intra_bytes_per_gpu = 0.0;
  double inter_bytes_per_gpu = 0.0;
  double inter_bytes_per_node = 0.0;
  double nic_utilization = 0.0;   // inter bytes per node / (NIC line rate x iteration)
  // Rates.
  double throughput_samples_per_s = 0.0;
  double single_gpu_iteration_s = 0.0;
  double scaling_factor = 0.0;    // throughput / (GPUs x single-GPU throughput)
  int buckets = 0;
};

/// What simulating variable compute adds: the distribution of iteration times and who
/// waits. Means are over the simulated iterations and the ranks.
struct VariabilityOutcome {
  IterationResult iteration;          // means (exposed_comm_s includes waiting for others)
  double iteration_p50_s = 0.0;       // of per-rank iteration durations
  double iteration_p99_s = 0.0;
  double idle_mean_s = 0.0;           // per rank and iteration: waiting for others/network
  double idle_min_s = 0.0;
  double idle_max_s = 0.0;
  int straggler_rank = 0;             // the rank that waits least
  int iterations = 0;                 // simulated after the warm-up
  std::span<const double> idle_per_rank_s;  // each rank's mean idle per iteration
};

}  // namespace dtperf
