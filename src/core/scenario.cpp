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

namespace {

// The rate of fused attention's products: the profile's fused-attention fraction of the
// peak of the units the kernels run on; without one, a large GEMM's rate on those units
// in fp32 and tf32, and 0 in 16 bits (priced as a GEMM of its size). In 16 bits they run
// on the tensor cores (FlashAttention, cuDNN). In fp32 and tf32, PyTorch's
// scaled_dot_product_attention runs the memory-efficient kernels' fp32 variants
// (fmha_cutlassF_f32 / fmha_cutlassB_f32, SIMT, no tensor cores), so TF32 does not speed
// them up: on one H200 they ran at the same rate in fp32 and tf32, GPT-2 small's causal
// attention at 26 TFLOP/s and ViT-B/16's at 18-20 counting the products they compute,
// 0.27-0.39 of the 67 TFLOP/s fp32 datasheet peak, as FlashAttention-2's 0.35 of the
// tensor cores' (validation/data/single-gpu/h200-op-rates.json).
double fused_attention_flops_per_s(const ClusterProfile& p, DType dtype, double dtype_peak_flops_per_s) {
  const auto fp32 = p.gpu.peak_flops_per_s.find(DType::fp32);
  const bool vector_units = (dtype == DType::fp32 || dtype == DType::tf32) && fp32 != p.gpu.peak_flops_per_s.end();
  if (p.compute.fused_attention_efficiency) {
    return (vector_units ? fp32->second : dtype_peak_flops_per_s) * *p.compute.fused_attention_efficiency;
  }
  if (!vector_units) return 0.0;
  double efficiency = p.compute.gemm_efficiency;
  for (const auto& curve : p.calibration.gemm) {
    if (curve.dtype == DType::fp32 && !curve.flops_and_efficiency.empty()) {
      efficiency = curve.flops_and_efficiency.back().second;  // its largest shape
    }
  }
  return fp32->second * efficiency;
}

// The rates of matrix products whose rows are not aligned to 16 bytes, as fractions of
// the dtype's peak (0: as fast as aligned ones). cuBLAS's tensor-core kernels load operands
// 16 bytes at a time, which needs every row to start on a 16-byte boundary; otherwise it
// runs CUTLASS kernels that load 4 bytes or one element at a time ("align2", "align1" in
// their names). Measured on one H200 (validation/data/single-gpu/h200-op-rates.json,
// validation/measure_op_rates.py: a linear layer of 768 features onto 50,257, 50,260 and
// 50,304 for 8,192 tokens, forward and input gradient, and 8192 x 4097 x 4096 against
// 8192 x 4096 x 4096), against the datasheet's dense peaks (tf32 494.7, 16-bit 989.4
// TFLOP/s):
// - tf32, a feature dimension not a multiple of 4 (align1): 122.3-130.7 TFLOP/s, mean
//   125.2: 0.253. A multiple of 4 is 16 bytes, aligned: 50,260 ran as 50,304 did.
// - fp16 and bf16, not a multiple of 4 (align1): 115.4-140.0 TFLOP/s, mean 127.4: 0.129; a
//   multiple of 4, not of 8 (align2): 217.2-257.1, mean 234.2: 0.237. fp8 takes 16-bit's
//   (its rule is stricter still; not measured).
// - fp32 runs SIMT kernels at the same rate either way (48.8-51.3 TFLOP/s): 0.
// Training's weight gradient reads the misaligned output gradient too: in GPT-2 small's
// step on the same GPU its output layer's three products (vocabulary 50,257) all ran align1
// kernels, about 125 TFLOP/s in tf32 and bf16 alike (h200-kernels.json).
struct MisalignedShares {
  double misaligned = 0.0;
  double partly_aligned = 0.0;
};
MisalignedShares misaligned_gemm_shares(DType dtype) {
  switch (dtype) {
    case DType::fp32: return {0.0, 0.0};
    case DType::tf32: return {0.253, 0.0};
    case DType::fp16:
    case DType::bf16:
    case DType::fp8: return {0.129, 0.237};
  }
  return {0.0, 0.0};
}

}  // namespace

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
  c.fused_attention_flops_per_s = fused_attention_flops_per_s(p, dtype, c.peak_flops_per_s);
  const MisalignedShares misaligned = misaligned_gemm_shares(dtype);
  c.misaligned_gemm_flops_per_s = misaligned.misaligned * c.peak_flops_per_s;
  c.partly_aligned_gemm_flops_per_s = misaligned.partly_aligned * c.peak_flops_per_s;
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
