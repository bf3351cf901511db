#include "dtperf/scenario.hpp"

#include <fmt/format.h>

#include <string>
#include <vector>

#include "dtperf/error.hpp"
#include "dtperf/units.hpp"

namespace dtperf {

ClusterProfile apply_overrides(ClusterProfile p, const ClusterOverrides& o) {
  if (o.nodes) p.nodes = *o.nodes;
  if (o.gpus_per_node) p.gpus_per_node = *o.gpus_per_node;
  if (o.nics_per_node) p.inter.nics_per_node = *o.nics_per_node;
  if (o.nic_gbps) p.inter.nic_gbps = *o.nic_gbps;
  if (o.inter_latency_s) p.inter.latency_s = *o.inter_latency_s;
  if (o.transport_efficiency) p.inter.transport_efficiency = *o.transport_efficiency;
  if (o.host_gbps) p.inter.host_gbps = *o.host_gbps;
  if (o.intra_bandwidth_bytes_per_s) p.intra.bandwidth_bytes_per_s = *o.intra_bandwidth_bytes_per_s;
  if (o.intra_latency_s) p.intra.latency_s = *o.intra_latency_s;
  if (o.intra_efficiency) p.intra.efficiency = *o.intra_efficiency;
  if (o.dtype) p.compute.dtype = *o.dtype;
  if (o.interference_factor) p.compute.interference_factor = *o.interference_factor;
  if (o.comm_interference_factor) p.compute.comm_interference_factor = *o.comm_interference_factor;
  if (o.iteration_overhead_s) p.compute.iteration_overhead_s = *o.iteration_overhead_s;
  if (o.cross_node_overhead_s) p.compute.cross_node_overhead_s = *o.cross_node_overhead_s;
  return p;
}

NetworkParams network_params(const ClusterProfile& p, double compression_ratio,
                             std::span<const std::pair<double, double>> reduction) {
  NetworkParams n;
  n.nodes = p.nodes;
  n.gpus_per_node = p.gpus_per_node;
  n.intra_bytes_per_s = p.intra.bandwidth_bytes_per_s * p.intra.efficiency;
  n.intra_latency_s = p.intra.latency_s;
  n.nics_per_node = p.inter.nics_per_node;
  n.nic_line_bytes_per_s = units::gbps_to_bytes_per_s(p.inter.nic_gbps);
  n.transport_efficiency = p.inter.transport_efficiency;
  n.host_bytes_per_s = units::gbps_to_bytes_per_s(p.inter.host_gbps);
  n.host_cpu_s_per_byte = p.inter.host_cpu_ns_per_byte * 1e-9;
  n.host_exchange_share = p.inter.host_exchange_share;
  n.shared_nic_efficiency = p.inter.shared_nic_efficiency;
  n.inter_latency_s = p.inter.latency_s;
  n.lockstep_ring = p.transport.lockstep_ring;
  n.collectives_in_flight = p.transport.collectives_in_flight;
  n.launch_s = p.transport.launch_s;
  n.tensor_s = p.transport.tensor_s;
  n.host_s_per_byte = p.transport.host_s_per_byte;
  n.inter_host_s_per_byte = p.transport.inter_host_s_per_byte;
  n.compression_ratio = compression_ratio;
  n.reduction = ReductionCost{reduction};
  n.tables = p.calibration.tables;
  return n;
}

DType compute_dtype(const ClusterProfile& profile, const ClusterOverrides& overrides) {
  return overrides.dtype.value_or(profile.compute.dtype);
}

double peak_flops_per_s(const ClusterProfile& p, DType dtype) {
  const auto peak = p.gpu.peak_flops_per_s.find(dtype);
  if (peak != p.gpu.peak_flops_per_s.end()) return peak->second;
  std::vector<std::string> have;
  for (const auto& [listed, rate] : p.gpu.peak_flops_per_s) have.emplace_back(name_of(listed));
  throw InputError::in_input("dtype", fmt::format("profile '{}' has no {} peak for its GPU ({}); it has: {}", p.name,
                                                  name_of(dtype), p.gpu.model, join_names(have)));
}

ComputeParams compute_params(const ClusterProfile& p, DType dtype) {
  ComputeParams c;
  c.peak_flops_per_s = peak_flops_per_s(p, dtype);
  // Elementwise kernels run on the vector units: the fp32 rate (or the slowest listed).
  c.vector_flops_per_s = p.gpu.peak_flops_per_s.contains(DType::fp32) ? p.gpu.peak_flops_per_s.at(DType::fp32)
                                                                       : p.gpu.peak_flops_per_s.begin()->second;
  c.gemm_efficiency = p.compute.gemm_efficiency;
  c.half_efficiency_flops = p.compute.half_efficiency_flops;
  for (const auto& curve : p.calibration.gemm) {
    if (curve.dtype == dtype) c.efficiency_curve = curve.flops_and_efficiency;
  }
  c.memory_bytes_per_s = p.gpu.memory_bytes_per_s * p.compute.memory_efficiency;
  c.activation_bytes_per_element = activation_bytes_per_element(dtype);
  c.fused_attention_efficiency = p.compute.fused_attention_efficiency.value_or(0.0);
  if (p.calibration.copy_bytes_per_s) c.memory_bytes_per_s = *p.calibration.copy_bytes_per_s;
  c.kernel_overhead_s = p.compute.kernel_overhead_s;
  c.interference_factor = p.compute.interference_factor;
  c.comm_interference_factor = p.compute.comm_interference_factor;
  c.iteration_overhead_s = p.compute.iteration_overhead_s;
  c.cross_node_overhead_s = p.compute.cross_node_overhead_s;
  c.runs_on_host = p.compute.runs_on_host;
  return c;
}

ComputeRequest compute_request(const ModelSpec& model, const WorkloadOptions& o, int ranks) {
  ComputeRequest r;
  r.source = o.compute_source;
  r.accumulation_steps = o.accumulation_steps;
  r.batch_per_gpu = o.global_batch ? *o.global_batch / (static_cast<double>(ranks) * o.accumulation_steps)
                                   : o.batch_per_gpu.value_or(model.default_batch_per_gpu);
  r.optimizer = o.optimizer.value_or(model.default_optimizer);
  r.single_gpu_iteration_s = o.single_gpu_iteration_s;
  r.measured_batch_per_gpu = o.measured_batch_per_gpu;
  r.recompute_activations = o.recompute_activations;
  return r;
}

}  // namespace dtperf
