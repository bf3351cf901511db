#pragma once
// A training workload as the engine sees it: the parameter tensors in the order their
// gradients become ready in backward, each with its size and the work attributed to it.
// Three sources fill it: the built-in zoo (architecture formulas), a per-layer timing
// log ([NET] `.bk.log`), or a JSON layer file (see io/model_files.hpp).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dtperf/names.hpp"

namespace dtperf {

/// The bucket cap both frameworks default to: PyTorch DDP's bucket_cap_mb = 25 and
/// Decent-DP's bucket_size_in_mb = 25 (both count MiB). The one default of every bucket
/// size in dtperf (All-Reduce, gossip, the command line's --bucket-cap-mib and
/// --gossip-bucket-mib); reports call it bucket_cap_MiB.
inline constexpr double kDefaultBucketCapBytes = 25.0 * 1024 * 1024;

enum class Optimizer : std::uint8_t { sgd, sgd_momentum, adam, lamb };
template <>
struct EnumNames<Optimizer> {
  static constexpr Named<Optimizer> table[] = {
      {Optimizer::sgd, "sgd"},
      {Optimizer::sgd_momentum, "sgd-momentum"},
      {Optimizer::adam, "adam"},
      {Optimizer::lamb, "lamb"},
      {Optimizer::sgd_momentum, "momentum", true},
      {Optimizer::adam, "adamw", true},
  };
};

struct TensorSpec {
  std::string name;
  std::int64_t params = 0;  // elements
  // Work of the operator that owns this tensor, per sample, FLOPs counted as
  // 2 x multiply-accumulates. Operators without parameters (pooling, attention
  // score products, activations) are attributed to a neighbouring tensor.
  double forward_flops_per_sample = 0.0;
  double backward_flops_per_sample = 0.0;
  // The part of the forward FLOPs done as matrix products (GEMMs, convolutions,
  // attention products): it runs at the size-dependent GEMM efficiency, the rest
  // (norms, activations, bias adds) at the vector rate. Backward keeps the same split.
  double forward_gemm_flops_per_sample = 0.0;
  // The part of those matrix products (forward, and backward's own count) done inside a
  // fused attention kernel (FlashAttention): with a fused-attention efficiency in the
  // profile they run at it instead of at the GEMM efficiency.
  double forward_attention_flops_per_sample = 0.0;
  double backward_attention_flops_per_sample = 0.0;
  // What that kernel computes beyond those products, on tiles the sequence fills only
  // partly (its last tiles, a causal mask's diagonal): not in the FLOPs above, which count
  // the model's work, but in the kernel's time (the zoo's fused_attention_products).
  double forward_attention_tile_flops_per_sample = 0.0;
  double backward_attention_tile_flops_per_sample = 0.0;
  // The part of the forward matrix products whose operands have a contiguous dimension
  // (a linear layer's input or output features) that is not a multiple of 4 elements, and
  // of those left that is not a multiple of 8: GEMM kernels load 16 bytes at a time only
  // from rows aligned to 16 bytes, else they run slower kernels (compute.hpp). Backward's
  // data and weight gradients read the same tensors: the same shares of its products.
  double forward_misaligned_gemm_flops_per_sample = 0.0;
  double forward_partly_aligned_gemm_flops_per_sample = 0.0;
  // Activation traffic per sample (bytes read + written) of that operator in forward,
  // counted at 4 bytes per element (fp32); backward is taken as twice this. The memory
  // side of the roofline. Under 16-bit compute (PyTorch's autocast) elements are 2 bytes,
  // except the part autocast keeps in fp32 (its fp32 list: layer norm, softmax,
  // cross-entropy; and what an fp32 operand makes fp32 by type promotion), which is
  // `forward_fp32_memory_bytes_per_sample` of this total; and each element autocast
  // converts between fp32 and 16 bits is read at 4 bytes and written at 2 (or the
  // reverse), once in forward and once for its gradient in backward
  // (`forward_cast_elements_per_sample`). Both are 0 for a layer file's tensors: all of
  // its traffic follows the compute dtype.
  double forward_memory_bytes_per_sample = 0.0;
  // The part of it the operator's matrix products move inside their own kernels (operands
  // read, result written), at 4 bytes per element, in the compute dtype's size under
  // autocast; the rest is the traffic of the elementwise and normalisation kernels that run
  // after them on the same stream (compute.hpp).
  double forward_gemm_memory_bytes_per_sample = 0.0;
  double forward_fp32_memory_bytes_per_sample = 0.0;
  double forward_cast_elements_per_sample = 0.0;
  // Backward traffic per sample beyond twice forward's, at 4 bytes per element and in the
  // compute dtype's size under autocast: kernels autograd runs that have no counterpart in
  // forward (a select's zero-filled gradient and the sum of several gradients of one
  // tensor), less the twice-forward the rule above already charged for the operator.
  // Counted by the zoo where an implementation is known to run them; 0 for a layer file.
  // It may be negative: an operator chain whose backward moves less than twice its forward.
  double backward_extra_memory_bytes_per_sample = 0.0;
  // Of that extra, as forward's fields split forward's traffic: the part autocast keeps in
  // fp32, and the elements autograd converts between fp32 and 16 bits beyond the once per
  // forward cast the rule charges (a gradient cast back to a 16-bit input's dtype). Both 0
  // for a layer file.
  double backward_extra_fp32_memory_bytes_per_sample = 0.0;
  double backward_extra_cast_elements_per_sample = 0.0;
  // What autograd keeps from this operator's forward for backward, per sample (memory.hpp):
  // activations at 4 bytes per element (halved when compute is 16-bit), and masks and
  // indices whose size does not follow the compute dtype. 0 and 0: not known.
  double saved_activation_bytes_per_sample = 0.0;
  double saved_fixed_bytes_per_sample = 0.0;
  // Measured backward time of this tensor (the wait since the previous gradient was
  // ready), when the source is a per-layer timing log.
  std::optional<double> measured_backward_s;
};

struct ModelSpec {
  std::string name;
  std::string description;
  std::string citation;      // where the architecture or the measurement comes from
  std::string sample_unit = "sample";  // "image", "token", "sequence"
  double default_batch_per_gpu = 32.0;
  int param_bytes = 4;       // bytes per parameter and per gradient element on the wire
  Optimizer default_optimizer = Optimizer::sgd_momentum;
  std::vector<TensorSpec> tensors;  // backward (gradient-ready) order

  // Measurements that came with the model, if any.
  std::optional<double> measured_iteration_s;  // single-GPU iteration time
  std::optional<double> measured_batch_per_gpu;  // batch the measurements were taken at
  std::optional<double> measured_forward_s;      // measured forward pass (a collector's)
  std::optional<double> measured_optimizer_s;    // measured optimizer step
  // Bytes autograd kept for backward per sample, measured by the collector (memory.hpp).
  std::optional<double> measured_saved_bytes_per_sample;
  // Where the measured times were taken, as the collector records it ("cpu", "cuda",
  // "cuda:1"); "" when the file does not say (.bk.log, hand-written files).
  std::string measured_device;

  std::int64_t total_params() const;
  double total_bytes() const;  // params x param_bytes
  double forward_flops_per_sample() const;  // summed over the tensors, in their order
  bool has_measured_layers() const;
};


}  // namespace dtperf
