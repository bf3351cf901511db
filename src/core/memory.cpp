#include "dtperf/memory.hpp"

#include <algorithm>
#include <cmath>

namespace dtperf {

double saved_bytes_per_sample(const ModelSpec& model, double activation_scale, bool recompute) {
  const std::size_t n = model.tensors.size();
  const auto saved = [&](std::size_t i) {
    const TensorSpec& t = model.tensors[i];
    return t.saved_activation_bytes_per_sample * activation_scale + t.saved_fixed_bytes_per_sample;
  };
  if (!recompute || n == 0) {
    double total = 0.0;
    for (std::size_t i = 0; i < n; ++i) total += saved(i);
    return total;
  }
  const auto segment = static_cast<std::size_t>(std::ceil(std::sqrt(static_cast<double>(n))));
  double checkpoints = 0.0;
  double largest_segment = 0.0;
  for (std::size_t first = 0; first < n; first += segment) {
    // Tensors are listed in backward order: a segment's first operator in forward order
    // is its last listed.
    const std::size_t end = std::min(n, first + segment);
    double in_segment = 0.0;
    for (std::size_t i = first; i < end; ++i) in_segment += saved(i);
    checkpoints += saved(end - 1);
    largest_segment = std::max(largest_segment, in_segment);
  }
  return checkpoints + largest_segment;
}

double gib_to_a_tenth(double bytes) { return std::round(bytes / units::GiB * 10.0) / 10.0; }

MemoryBreakdown memory_per_gpu(const ModelSpec& model, const ClusterProfile& cluster, DType dtype,
                               const ComputeRequest& request, ReplicaScheme scheme, const AllReduceOptions& allreduce,
                               Sharding sharding) {
  const double params = static_cast<double>(model.total_params());
  const double wire = model.param_bytes;
  MemoryBreakdown m;
  m.capacity_bytes = cluster.gpu.memory_gib * units::GiB;
  const bool half = activation_bytes_per_element(dtype) < 4.0;  // fp8: 16-bit outside GEMMs
  m.weights_bytes = params * (model.param_bytes < 4 && half ? wire : 4.0);
  m.gradients_bytes = params * wire;
  const bool two_moments = request.optimizer == Optimizer::adam || request.optimizer == Optimizer::lamb;
  const double state_per_param = two_moments                                     ? 8.0
                                 : request.optimizer == Optimizer::sgd_momentum ? 4.0
                                                                                : 0.0;
  m.optimizer_bytes = params * state_per_param;
  const double element_scale = activation_bytes_per_element(dtype) / 4.0;
  double per_sample = saved_bytes_per_sample(model, element_scale, request.recompute_activations);
  if (per_sample <= 0.0 && model.measured_saved_bytes_per_sample) {
    // A measured total at the collector's dtype; recomputation keeps about 1/sqrt(n) of it.
    per_sample = *model.measured_saved_bytes_per_sample;
    if (request.recompute_activations && !model.tensors.empty()) {
      per_sample *= 2.0 / std::sqrt(static_cast<double>(model.tensors.size()));
    }
  }
  m.activations_known = per_sample > 0.0;
  m.activations_bytes = per_sample * request.batch_per_gpu;
  if (scheme == ReplicaScheme::sharded) {
    const double n = shard_ranks(sharding, cluster.ranks(), cluster.gpus_per_node);
    double largest_tensor = 0.0;
    for (const TensorSpec& t : model.tensors) largest_tensor = std::max(largest_tensor, static_cast<double>(t.params));
    const double unit = std::min(params * wire, std::max(allreduce.bucket_cap_bytes, largest_tensor * wire));
    m.optimizer_bytes /= n;
    if (sharding == Sharding::zero1) {
      m.comm_buffers_bytes = unit;
    } else if (sharding == Sharding::zero2) {
      m.gradients_bytes /= n;
      m.comm_buffers_bytes = unit;
    } else {
      m.weights_bytes /= n;
      m.gradients_bytes /= n;
      m.comm_buffers_bytes = 3.0 * unit;  // two gathered units, one unit's full gradients
    }
  } else if (scheme == ReplicaScheme::gossip) {
    m.comm_buffers_bytes = params * wire;
  } else if (allreduce.bucketing == Bucketing::horovod) {
    m.comm_buffers_bytes = std::min(allreduce.fusion_buffer_bytes, params * wire);
  } else {
    m.comm_buffers_bytes = params * wire;
  }
  if (cluster.ranks() == 1) m.comm_buffers_bytes = 0.0;
  return m;
}

double outer_state_bytes(const ModelSpec& model, bool with_momentum) {
  return static_cast<double>(model.total_params()) * 4.0 * (with_momentum ? 2.0 : 1.0);
}

}  // namespace dtperf
