#pragma once
// From a cluster profile, a model and the user's what-if options to the numeric
// parameters the engines take. Pure: no I/O. The options are what a user can change on
// the command line or in a scenario file; everything left unset comes from the profile
// or the model.
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "dtperf/allreduce.hpp"
#include "dtperf/cluster.hpp"
#include "dtperf/compute.hpp"
#include "dtperf/network.hpp"
#include "dtperf/workload.hpp"

namespace dtperf {

struct ClusterOverrides {
  std::optional<int> nodes;
  std::optional<int> gpus_per_node;
  std::optional<int> nics_per_node;
  std::optional<double> nic_gbps;
  std::optional<double> inter_latency_s;
  std::optional<double> transport_efficiency;
  std::optional<double> host_gbps;  // 0: no host ceiling
  std::optional<double> intra_bandwidth_bytes_per_s;  // link rate, before efficiency
  std::optional<double> intra_latency_s;
  std::optional<double> intra_efficiency;
  std::optional<DType> dtype;
  std::optional<double> interference_factor;
  std::optional<double> comm_interference_factor;
  std::optional<double> iteration_overhead_s;
  std::optional<double> cross_node_overhead_s;

  bool operator==(const ClusterOverrides&) const = default;
};

struct WorkloadOptions {
  std::optional<double> batch_per_gpu;  // default: the model's
  std::optional<double> global_batch;   // strong scaling: split over the GPUs evaluated
  std::optional<Optimizer> optimizer;   // default: the model's
  ComputeSource compute_source = ComputeSource::automatic;
  std::optional<double> single_gpu_iteration_s;
  std::optional<double> measured_batch_per_gpu;
  double compression_ratio = 1.0;
  bool recompute_activations = false;  // gradient checkpointing (compute.hpp)
  // Gradient accumulation steps K (compute.hpp): `batch_per_gpu` is one micro-step's (the
  // data loader's batch), `global_batch` one optimizer step's, so each GPU's micro-batch
  // is global_batch / (GPUs x K), as DeepSpeed's train_batch_size counts it.
  int accumulation_steps = 1;
  // Bytes per gradient element on the wire for All-Reduce and sharded schemes (--grad-dtype);
  // default: the model's parameter bytes.
  std::optional<int> grad_bytes;
  double compute_scale = 1.0;
  double forward_scale = 1.0;   // a fit with a forward/backward breakdown
  double backward_scale = 1.0;

  bool operator==(const WorkloadOptions&) const = default;
};

/// The profile with the overrides applied (what the report shows as the cluster).
ClusterProfile apply_overrides(ClusterProfile profile, const ClusterOverrides& overrides);

/// Link parameters of a profile. `reduction` (bytes, seconds) and the profile's
/// calibrated tables are referenced, not copied: keep them alive while the result is used.
NetworkParams network_params(const ClusterProfile& profile, double compression_ratio,
                             std::span<const std::pair<double, double>> reduction);

/// Compute parameters of a profile for a dtype (which must have a peak in the profile).
/// The GPU's peak rate for `dtype`; InputError (input "dtype") when the profile lists none.
double peak_flops_per_s(const ClusterProfile& profile, DType dtype);
ComputeParams compute_params(const ClusterProfile& profile, DType dtype);

/// The dtype a scenario computes in: the override, else the profile's default.
DType compute_dtype(const ClusterProfile& profile, const ClusterOverrides& overrides);

/// The compute request for `ranks` GPUs: a global batch is split evenly over them and
/// over the accumulation steps.
ComputeRequest compute_request(const ModelSpec& model, const WorkloadOptions& options, int ranks);

}  // namespace dtperf
