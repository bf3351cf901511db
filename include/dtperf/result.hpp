#pragma once
// What one prediction says about one training iteration. The table and the JSON of
// every command are printed from these structs and never recomputed.
namespace dtperf {

struct IterationResult {
  // Time per iteration, seconds.
  double iteration_s = 0.0;
  double forward_s = 0.0;
  double backward_s = 0.0;        // backward compute, including interference
  double exposed_comm_s = 0.0;    // time compute waits for communication
  double optimizer_s = 0.0;       // optimizer step (and, for gossip, the mixing)
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

}  // namespace dtperf
