#pragma once
// The compute model: per-tensor backward time, total forward time and the optimizer
// step for one GPU at a given per-GPU batch. Three sources, in order of fidelity
// (MODELS.md section 2):
//   measured_layers     per-tensor backward times measured at some batch (.bk.log);
//   measured_iteration  a measured single-GPU iteration time, spread over the tensors
//                       in proportion to their FLOPs;
//   flops               FLOPs and activation bytes per tensor, timed on a launch-bound
//                       roofline: max(dispatch floor, arithmetic at the size-dependent GEMM
//                       efficiency, memory traffic).
// The dispatch floor (`kernel_overhead_s`, per tensor and pass) is the host time to issue
// a layer's kernels: in eager frameworks the GPU runs ahead of it on large layers and
// waits for it on small ones, which is why small per-GPU batches stop getting faster.
// A model measured by the collector also carries its forward pass and optimizer step;
// with measured layers they replace the derived forward (iteration - backward - step, or
// half the backward) and the memory-bound step estimate; a single-GPU iteration time given
// with the request then scales all three (and every layer) to add up to it.
// Batch law for measured sources: a time t0 measured at batch b0 becomes
// t(b) = max(min(floor, t0), t0 * b / b0). The flops source scales with the batch by
// construction (GEMMs grow, and so does their efficiency).
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "dtperf/workload.hpp"
#include "dtperf/names.hpp"

namespace dtperf {

enum class ComputeSource : std::uint8_t { automatic, measured_layers, measured_iteration, flops };
template <>
struct EnumNames<ComputeSource> {
  static constexpr Named<ComputeSource> table[] = {
      {ComputeSource::automatic, "auto"},
      {ComputeSource::measured_layers, "measured-layers"},
      {ComputeSource::measured_iteration, "measured-iteration"},
      {ComputeSource::flops, "flops"},
  };
};

/// A calibrated GEMM efficiency table ((FLOPs, efficiency) points), viewed, not owned;
/// two are equal when they view the same table.
struct EfficiencyCurve : std::span<const std::pair<double, double>> {
  using std::span<const std::pair<double, double>>::span;
  bool operator==(const EfficiencyCurve& other) const { return data() == other.data() && size() == other.size(); }
};

struct ComputeParams {
  double peak_flops_per_s = 1e12;         // dense peak of the compute dtype (matrix units)
  double vector_flops_per_s = 1e12;       // elementwise work (the GPU's fp32 peak)
  double gemm_efficiency = 0.7;           // large-GEMM fraction of peak
  double half_efficiency_flops = 1e9;     // FLOPs of a GEMM that reaches half of that
  EfficiencyCurve efficiency_curve;       // calibrated, overrides
  double memory_bytes_per_s = 1e12;       // achieved memory bandwidth
  // Rate of the products inside fused attention kernels (0: the GEMM efficiency of their
  // size, as any matrix product): the profile's fused-attention fraction of the peak of
  // the units they run on, the vector units in fp32 and tf32 (PyTorch's fp32 kernels are
  // SIMT), the dtype's matrix units in 16 bits (compute_params).
  double fused_attention_flops_per_s = 0.0;
  // Rates of matrix products whose rows are not aligned to 16 bytes (TensorSpec's
  // misaligned and partly aligned products; 0: no slower than aligned ones), from the
  // dtype (compute_params).
  double misaligned_gemm_flops_per_s = 0.0;
  double partly_aligned_gemm_flops_per_s = 0.0;
  // Bytes of one activation element in the compute dtype: 4 for fp32 and tf32 (tf32 is
  // an fp32 format in memory), 2 under 16-bit autocast (activation_bytes_per_element).
  double activation_bytes_per_element = 4.0;
  double kernel_overhead_s = 5e-6;        // dispatch floor per tensor and pass
  // Contention while compute and communication overlap (see contention below):
  double interference_factor = 1.0;       // compute runs x this while communication runs
  double comm_interference_factor = 1.0;  // communication runs x this while compute runs
  // What-ifs (--iteration-overhead-ms, --cross-node-overhead-ms), never fitted: a fixed
  // time per distributed iteration, and more once the job's communication crosses nodes.
  // The framework's host work a fit finds scales with its work instead (per collective,
  // tensor and byte: NetworkParams::launch_s, tensor_s, host_s_per_byte,
  // inter_host_s_per_byte).
  double iteration_overhead_s = 0.0;
  double cross_node_overhead_s = 0.0;
  // Compute runs on the host CPU (CPU training): a host-driven transport's CPU time per
  // byte then takes cores from it (contention.hpp).
  bool runs_on_host = false;
  double compute_scale = 1.0;             // multiplies forward and backward (anchoring)
  double forward_scale = 1.0;             // multiplies forward only (a fit with a breakdown)
  double backward_scale = 1.0;            // multiplies backward only

  bool operator==(const ComputeParams&) const = default;
};

struct ComputeRequest {
  ComputeSource source = ComputeSource::automatic;
  double batch_per_gpu = 32.0;
  Optimizer optimizer = Optimizer::sgd_momentum;
  std::optional<double> single_gpu_iteration_s;  // measured, at measured_batch_per_gpu
  std::optional<double> measured_batch_per_gpu;  // default: batch_per_gpu
  // Activation recomputation (gradient checkpointing): forward keeps only the inputs of
  // checkpointed segments and runs each segment again in backward, so backward costs one
  // more forward pass (Chen et al. 2016, "Training Deep Nets with Sublinear Memory Cost").
  bool recompute_activations = false;
  // Gradient accumulation: an optimizer step takes K micro-steps of `batch_per_gpu` each;
  // the first K - 1 only compute (forward and backward, gradients summed locally: DDP's
  // no_sync), the last one also communicates as the scheme does every iteration. An
  // "iteration" is then one optimizer step of K x batch_per_gpu samples per GPU.
  int accumulation_steps = 1;
  double samples_per_gpu_per_step() const { return batch_per_gpu * accumulation_steps; }

  bool operator==(const ComputeRequest&) const = default;
};

/// Output buffers are owned by the caller so that evaluation allocates nothing:
/// `backward_s` must have one slot per tensor.
struct ComputeTimes {
  std::span<double> backward_s;
  double forward_s = 0.0;
  double backward_total_s = 0.0;
  double optimizer_s = 0.0;
  // The K - 1 micro-steps of gradient accumulation before the last: (K - 1) x (forward +
  // backward); 0 without accumulation.
  double accumulation_s = 0.0;
  ComputeSource source = ComputeSource::flops;
  /// One optimizer step on one GPU: every micro-step and the step.
  double iteration_s() const { return accumulation_s + forward_s + backward_total_s + optimizer_s; }
};

/// Which source `automatic` resolves to for this model and request.
ComputeSource resolve_compute_source(const ModelSpec& model, const ComputeRequest& request);

/// Fills `out` (its backward_s span must be model.tensors.size() long). Throws
/// std::invalid_argument when the request cannot be met (e.g. a measured iteration
/// shorter than the measured backward); the io layer turns that into an InputError.
void compute_times(const ModelSpec& model, const ComputeParams& params,
                   const ComputeRequest& request, ComputeTimes& out);

/// compute_times for a caller that asks again with the same inputs (a fit varying network
/// or contention parameters or the compute scales, a search over NIC rates or node
/// counts): the times before the scales are kept with the inputs they depend on, and
/// computed again only when the model, one of those parameters or the request changed;
/// the scales, recomputation and accumulation are applied on every call. The same values
/// as compute_times, whatever the calls.
class ComputeTimesCache {
 public:
  void get(const ModelSpec& model, const ComputeParams& params, const ComputeRequest& request, ComputeTimes& out);

 private:
  const ModelSpec* model_ = nullptr;
  ComputeParams key_;  // the parameters the unscaled times read (the rest at defaults)
  ComputeRequest request_;
  std::vector<double> unscaled_backward_s_;
  ComputeTimes unscaled_;  // its backward_s: unscaled_backward_s_
};

/// Efficiency of a GEMM of `flops` FLOPs: the calibrated curve (log-linear
/// interpolation) if given, else gemm_efficiency * f / (f + half_efficiency_flops).
double gemm_efficiency_at(const ComputeParams& params, double flops);

/// Memory-bound optimizer step over `params` elements of `param_bytes` each:
/// SGD reads p, g and writes p (3 passes); momentum adds m (5); Adam adds m, v (7). LAMB
/// (You et al. 2020) as NVIDIA's JIT kernel runs it per tensor (DeepLearningExamples,
/// Transformer-XL lamb.py): one fused pass reads p, g, m, v and writes m, v and the Adam
/// step (7), the two norms read p and the step (2), the update reads p and the step and
/// writes p (3): 12. Its per-tensor Python loop (a handful of launches per tensor, issued
/// one tensor after another) is not counted: like the fused optimizers, the step is priced
/// by its traffic.
double optimizer_step_s(const ComputeParams& params, Optimizer optimizer, double param_elements,
                        int param_bytes);

/// Bytes moved per parameter byte by one optimizer step (3, 5, 7 or 12 passes).
double optimizer_passes(Optimizer optimizer);

/// Contention. While compute kernels and communication overlap they slow each other down:
/// NCCL kernels occupy SMs and memory bandwidth, a host (CPU) transport takes the cores the
/// framework runs on. The engines model it with two factors, 1 + kappa each:
///   compute work w that starts at t0 while the stream is busy until t1 takes
///     w * f_compute                        if w * f_compute <= t1 - t0,
///     (t1 - t0) + (w - (t1 - t0) / f_compute)  otherwise;
///   communication of cost c that starts at t0 while compute runs until t1 takes the same
///   with f_comm (`stretched_compute_s` is that one function for both).
/// [NET] measured compute up to ~15 % slower beside Horovod/NCCL (f_compute ~ 1.15);
/// NCCL's own documentation warns that its kernels compete with compute for SMs. With both
/// factors 1 every engine gives exactly what it gives without contention (a tested rule).
/// When compute itself runs on the host CPU (CPU training), a host-driven transport (TCP)
/// shares the cores with it while it carries traffic: compute loses the transport's CPU
/// time, and the exchange waits for a measured share of it (contention.hpp, which gives
/// every engine its factors).
/// GPU compute does not pay it per byte: [NET] measured the
/// same ~13 % compute slow-down at 16, 32 and 64 GPUs (Fig. 2), not one growing with the
/// bytes per node, which is f_compute's shape.
/// The compute end a communication overlaps is estimated from the unstretched remaining
/// work (All-Reduce: the rest of backward; gossip: from the bucket's launch, the rest of
/// this iteration and the next one), which keeps each engine a single pass.
///
/// Duration of `work_s` that starts at `start_s` while the other resource is busy until
/// `busy_until_s`: it runs slower by `factor` during the overlap, at full speed afterwards.
/// A factor of +infinity makes no progress during the overlap (a host transport that takes
/// every core, contention.hpp). (Inline: the simulators call it for every rank, bucket and
/// iteration.)
inline double stretched_compute_s(double work_s, double start_s, double busy_until_s, double factor) {
  if (work_s <= 0.0 || factor == 1.0 || busy_until_s <= start_s) return work_s;
  const double busy_window = busy_until_s - start_s;
  if (work_s * factor <= busy_window) return work_s * factor;
  return busy_window + (work_s - busy_window / factor);
}

/// The same beside two busy windows that start together (two streams in flight at
/// `start_s`): `both_factor` until `first_until_s`, the earlier end, then `later_factor`
/// until `later_until_s`, full speed afterwards. Charging the factor of both streams
/// until the later one ends would have a short exchange (inside a node) slow compute for
/// as long as a long one (across nodes) runs: re-predicting a full validation grid's runs
/// (validation/harness.py), that put ring and one-peer-exp on 2 nodes x 2 ranks at 1 Gbit/s
/// and 2 ms at +9.7 and +8.8 % (now -3.0 and -3.8 %).
inline double stretched_compute_s(double work_s, double start_s, double first_until_s, double both_factor,
                                  double later_until_s, double later_factor) {
  if (work_s <= 0.0) return work_s;
  if (first_until_s <= start_s) return stretched_compute_s(work_s, start_s, later_until_s, later_factor);
  const double window = first_until_s - start_s;
  if (work_s * both_factor <= window) return work_s * both_factor;
  return window + stretched_compute_s(work_s - window / both_factor, first_until_s, later_until_s, later_factor);
}

}  // namespace dtperf
