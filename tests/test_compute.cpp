// Compute model: roofline with size-dependent GEMM efficiency, the measured sources,
// the batch law and the optimizer step.
#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "dtperf/compute.hpp"
#include "dtperf/error.hpp"
#include "dtperf/io/profile_json.hpp"
#include "dtperf/scenario.hpp"

using namespace dtperf;
using Catch::Matchers::WithinRel;

namespace {

ComputeParams simple_params() {
  ComputeParams p;
  p.peak_flops_per_s = 1e12;
  p.vector_flops_per_s = 1e11;
  p.gemm_efficiency = 0.5;
  p.half_efficiency_flops = 1e9;
  p.memory_bytes_per_s = 1e11;
  p.kernel_overhead_s = 10e-6;
  return p;
}

// A model of `tensors` (in backward order) with fp32 parameters.
ModelSpec model_of(std::string name, std::vector<TensorSpec> tensors) {
  ModelSpec m;
  m.name = std::move(name);
  m.param_bytes = 4;
  m.tensors = std::move(tensors);
  return m;
}

// The flops source at one sample per GPU, plain SGD.
ComputeRequest flops_request() {
  ComputeRequest request;
  request.source = ComputeSource::flops;
  request.batch_per_gpu = 1;
  request.optimizer = Optimizer::sgd;
  return request;
}

// Two tensors in backward order: a GEMM-heavy one and a memory-bound one.
ModelSpec two_tensor_model() {
  TensorSpec gemm;
  gemm.name = "fc.weight";
  gemm.params = 1'000'000;
  gemm.forward_flops_per_sample = 1e9;
  gemm.forward_gemm_flops_per_sample = 1e9;
  gemm.backward_flops_per_sample = 2e9;
  TensorSpec norm;
  norm.name = "bn.weight";
  norm.params = 1000;
  norm.forward_flops_per_sample = 1e6;
  norm.backward_flops_per_sample = 2e6;
  norm.forward_memory_bytes_per_sample = 1e7;
  return model_of("toy", {gemm, norm});
}

struct Buffers {
  std::vector<double> backward;
  ComputeTimes times;
  explicit Buffers(const ModelSpec& m) : backward(m.tensors.size()) { times.backward_s = backward; }
};

// Forward time and the tensor's backward time of a model of one tensor, from FLOPs.
std::pair<double, double> one_tensor_times(const TensorSpec& t, const ComputeParams& p) {
  const ModelSpec m = model_of(t.name, {t});
  Buffers b(m);
  compute_times(m, p, flops_request(), b.times);
  return {b.times.forward_s, b.backward[0]};
}

}  // namespace

TEST_CASE("GEMM efficiency rises with size towards its maximum", "[compute]") {
  const ComputeParams p = simple_params();
  // eff(f) = 0.5 * f / (f + 1 GFLOP): half of 0.5 at 1 GFLOP, 0.5 * 99/100 at 99 GFLOP.
  CHECK_THAT(gemm_efficiency_at(p, 1e9), WithinRel(0.25, 1e-12));
  CHECK_THAT(gemm_efficiency_at(p, 99e9), WithinRel(0.495, 1e-12));
}

TEST_CASE("a calibrated efficiency curve is interpolated in log FLOPs", "[compute]") {
  ComputeParams p = simple_params();
  const std::vector<std::pair<double, double>> curve = {{1e8, 0.2}, {1e10, 0.6}};
  p.efficiency_curve = curve;
  // 1e9 is halfway in log10 between 1e8 and 1e10: 0.4. Clamped outside.
  CHECK_THAT(gemm_efficiency_at(p, 1e9), WithinRel(0.4, 1e-12));
  CHECK(gemm_efficiency_at(p, 1e6) == 0.2);
  CHECK(gemm_efficiency_at(p, 1e12) == 0.6);
}

TEST_CASE("the flops source times each tensor on the roofline", "[compute][flops]") {
  const ModelSpec m = two_tensor_model();
  Buffers b(m);
  const ComputeRequest request = flops_request();
  compute_times(m, simple_params(), request, b.times);
  // Each operator takes the slowest of arithmetic, memory and the 10 us dispatch floor.
  // Forward GEMM: 1 GFLOP at eff 0.25 of 1 TFLOP/s = 4 ms.
  // Forward norm: memory 10 MB at 100 GB/s = 100 us beats 1 MFLOP of elementwise work
  // at the 100 GFLOP/s vector rate (10 us) and the floor.
  CHECK_THAT(b.times.forward_s, WithinRel(4e-3 + 100e-6, 1e-9));
  // Backward GEMM: 2 GFLOP split in two 1-GFLOP GEMMs at eff 0.25 => 8 ms.
  CHECK_THAT(b.backward[0], WithinRel(8e-3, 1e-9));
  // Backward norm: 2 x 10 MB at 100 GB/s = 200 us.
  CHECK_THAT(b.backward[1], WithinRel(200e-6, 1e-9));
  // SGD: 3 passes over 1,001,000 fp32 params = 12.012 MB at 100 GB/s = 120.12 us.
  CHECK_THAT(b.times.optimizer_s, WithinRel(120.12e-6, 1e-9));
  CHECK(b.times.source == ComputeSource::flops);
}

TEST_CASE("an operator's elementwise kernels run after its matrix products, not under them", "[compute][flops]") {
  // One tensor: a 1-GFLOP GEMM moving 20 MB itself, then a bias, activation and residual
  // moving 30 MB more (2 MFLOP at the vector rate). Forward:
  //   GEMM: max(1 GFLOP at eff 0.25 of 1 TFLOP/s = 4 ms, 20 MB at 100 GB/s = 0.2 ms) = 4 ms;
  //   the rest: max(2 MFLOP at 100 GFLOP/s = 20 us, 30 MB at 100 GB/s = 300 us) = 300 us;
  //   4.3 ms (a fused operator, max(4 ms, 50 MB = 0.5 ms), would take 4 ms).
  // Backward moves twice the traffic, its GEMM split in two 1-GFLOP GEMMs:
  //   max(8 ms, 0.4 ms) + max(40 us, 600 us) = 8.6 ms.
  TensorSpec t;
  t.name = "fc.weight";
  t.params = 1000;
  t.forward_flops_per_sample = 1.002e9;
  t.forward_gemm_flops_per_sample = 1e9;
  t.backward_flops_per_sample = 2.004e9;
  t.forward_memory_bytes_per_sample = 50e6;
  t.forward_gemm_memory_bytes_per_sample = 20e6;
  const ModelSpec m = model_of("gemm-then-elementwise", {t});
  Buffers b(m);
  compute_times(m, simple_params(), flops_request(), b.times);
  CHECK_THAT(b.times.forward_s, WithinRel(4.3e-3, 1e-9));
  CHECK_THAT(b.backward[0], WithinRel(8.6e-3, 1e-9));
  // All of the traffic the GEMM's own (a layer file's gemm layer): it hides under the
  // arithmetic, max(4 ms, 0.5 ms) forward and max(8 ms, 1 ms) backward, plus the 20 us of
  // elementwise arithmetic that runs after it.
  TensorSpec fused = t;
  fused.forward_gemm_memory_bytes_per_sample = 50e6;
  const auto [fused_forward, fused_backward] = one_tensor_times(fused, simple_params());
  CHECK_THAT(fused_forward, WithinRel(4.02e-3, 1e-9));
  CHECK_THAT(fused_backward, WithinRel(8.04e-3, 1e-9));
  // 10 MB more backward traffic of autograd's own kernels (at 4 bytes per element): the
  // rest of backward moves 60 + 10 = 70 MB, 700 us; forward does not change. In 16 bits the
  // extra follows the dtype (5 MB), as the other 60 MB (30 MB): 350 us.
  TensorSpec extra = t;
  extra.backward_extra_memory_bytes_per_sample = 10e6;
  const auto [extra_forward, extra_backward] = one_tensor_times(extra, simple_params());
  CHECK_THAT(extra_forward, WithinRel(4.3e-3, 1e-9));
  CHECK_THAT(extra_backward, WithinRel(8e-3 + 700e-6, 1e-9));
  ComputeParams half = simple_params();
  half.activation_bytes_per_element = 2.0;
  CHECK_THAT(one_tensor_times(extra, half).second, WithinRel(8e-3 + 350e-6, 1e-9));
}

TEST_CASE("16-bit compute moves 2-byte activations except what autocast keeps in fp32, and pays per cast",
          "[compute][flops]") {
  ModelSpec m = two_tensor_model();
  // The norm's 10 MB at fp32 size: 4 MB of it stays fp32 under autocast, and 0.5 M
  // elements are converted between fp32 and 16 bits.
  m.tensors[1].forward_fp32_memory_bytes_per_sample = 4e6;
  m.tensors[1].forward_cast_elements_per_sample = 0.5e6;
  Buffers b(m);
  const ComputeRequest request = flops_request();
  ComputeParams p = simple_params();
  p.activation_bytes_per_element = 2.0;
  compute_times(m, p, request, b.times);
  // Forward: the 6 MB that follows the dtype at 2 bytes (3 MB), the 4 MB in fp32, and the
  // casts at 4 + 2 bytes (3 MB): 10 MB at 100 GB/s = 100 us, as at fp32 here.
  CHECK_THAT(b.times.forward_s, WithinRel(4e-3 + 100e-6, 1e-9));
  // Backward: twice the activations (2 x 7 MB) and each cast's gradient once (3 MB):
  // 17 MB at 100 GB/s = 170 us, where fp32 moves 20 MB (200 us).
  CHECK_THAT(b.backward[1], WithinRel(170e-6, 1e-9));
  // Backward moving less than the rule, split as forward is (an eager operator chain): 2 MB
  // less at fp32 size, made of 3 MB less in fp32 and 1 MB more that follows the dtype,
  // and 0.25 M more casts. fp32: 20 - 2 = 18 MB, 180 us. 16 bits: 17 MB, + 1 MB at 2 bytes
  // (0.5 MB), - 3 MB, + 0.25 M casts at 4 + 2 bytes (1.5 MB): 16 MB, 160 us.
  m.tensors[1].backward_extra_memory_bytes_per_sample = -2e6;
  m.tensors[1].backward_extra_fp32_memory_bytes_per_sample = -3e6;
  m.tensors[1].backward_extra_cast_elements_per_sample = 0.25e6;
  compute_times(m, p, request, b.times);
  CHECK_THAT(b.backward[1], WithinRel(160e-6, 1e-9));
  ComputeParams fp32 = simple_params();
  fp32.activation_bytes_per_element = 4.0;
  compute_times(m, fp32, request, b.times);
  CHECK_THAT(b.backward[1], WithinRel(180e-6, 1e-9));
  m.tensors[1].backward_extra_memory_bytes_per_sample = 0.0;
  m.tensors[1].backward_extra_fp32_memory_bytes_per_sample = 0.0;
  m.tensors[1].backward_extra_cast_elements_per_sample = 0.0;
  // Without the fp32 part and the casts, 16 bits halve the traffic: 5 MB and 10 MB.
  m.tensors[1].forward_fp32_memory_bytes_per_sample = 0.0;
  m.tensors[1].forward_cast_elements_per_sample = 0.0;
  compute_times(m, p, request, b.times);
  CHECK_THAT(b.backward[1], WithinRel(100e-6, 1e-9));
  CHECK_THAT(b.times.forward_s, WithinRel(4e-3 + 50e-6, 1e-9));
  // fp32 and tf32 keep 4 bytes per element; fp16, bf16 and fp8 train in 2.
  CHECK(activation_bytes_per_element(DType::tf32) == 4.0);
  CHECK(activation_bytes_per_element(DType::fp8) == 2.0);
  CHECK(compute_params(io::load_profile("dgx-a100"), DType::bf16).activation_bytes_per_element == 2.0);
}

namespace {

// An operator of `products` FLOPs of matrix products, `attention` of them inside a fused
// attention kernel that computes `tile` more on partly filled tiles. Backward: twice the
// other products, 2.5 x the kernel's (FlashAttention-2's count).
TensorSpec attention_tensor(double products, double attention, double tile) {
  TensorSpec t;
  t.name = "proj.weight";
  t.params = 1000;
  t.forward_flops_per_sample = products;
  t.forward_gemm_flops_per_sample = products;
  t.forward_attention_flops_per_sample = attention;
  t.forward_attention_tile_flops_per_sample = tile;
  t.backward_flops_per_sample = 2.0 * (products - attention) + 2.5 * attention;
  t.backward_attention_flops_per_sample = 2.5 * attention;
  t.backward_attention_tile_flops_per_sample = 2.5 * tile;
  return t;
}

}  // namespace

TEST_CASE("fused attention's products run at the fused-attention rate", "[compute][flops]") {
  // 2 GFLOP of matrix products: a 1-GFLOP projection and 1 GFLOP inside a fused attention
  // kernel, whose backward does 2.5 GFLOP of products (4.5 GFLOP in all).
  const ModelSpec m = model_of("attention", {attention_tensor(2e9, 1e9, 0.0)});
  Buffers b(m);
  const ComputeRequest request = flops_request();
  ComputeParams p = simple_params();
  // Without a fused-attention rate, one 2-GFLOP GEMM at eff 0.5 x 2 / 3: 6 ms.
  compute_times(m, p, request, b.times);
  CHECK_THAT(b.times.forward_s, WithinRel(6e-3, 1e-9));
  // At 0.25 of the 1 TFLOP/s peak the attention takes 4 ms and the projection, a 1-GFLOP
  // GEMM at eff 0.25, 4 ms more.
  p.fused_attention_flops_per_s = 0.25e12;
  compute_times(m, p, request, b.times);
  CHECK_THAT(b.times.forward_s, WithinRel(8e-3, 1e-9));
  // Backward: 2.5 GFLOP of attention at 0.25 (10 ms) and the 2 GFLOP left in two 1-GFLOP
  // GEMMs at eff 0.25 (8 ms).
  CHECK_THAT(b.backward[0], WithinRel(18e-3, 1e-9));
  // In 16 bits, Hopper's datasheet profile sets it (FlashAttention-2 at 35 % of an H100's
  // 989.4 TFLOP/s); Ampere's leaves the GEMM curve, which FlashAttention-2 matches there.
  const ClusterProfile h100 = io::load_profile("dgx-h100");
  CHECK_THAT(compute_params(h100, DType::bf16).fused_attention_flops_per_s, WithinRel(0.35 * 989.4e12, 1e-9));
  CHECK(compute_params(io::load_profile("dgx-a100"), DType::bf16).fused_attention_flops_per_s == 0.0);
  // In fp32 and tf32 the kernels run on the vector units: 35 % of the H100's 67 TFLOP/s
  // fp32 peak in both dtypes, not of its 494.7 TFLOP/s tf32 peak.
  CHECK_THAT(compute_params(h100, DType::tf32).fused_attention_flops_per_s, WithinRel(0.35 * 67e12, 1e-9));
  CHECK_THAT(compute_params(h100, DType::fp32).fused_attention_flops_per_s, WithinRel(0.35 * 67e12, 1e-9));
  // Without a fraction, a large fp32 GEMM's rate there: Ampere's datasheet profile, the
  // A100's 19.5 TFLOP/s fp32 peak x its GEMM efficiency.
  const ClusterProfile a100 = io::load_profile("dgx-a100");
  CHECK_THAT(compute_params(a100, DType::tf32).fused_attention_flops_per_s,
             WithinRel(19.5e12 * a100.compute.gemm_efficiency, 1e-9));
  // A calibrated profile: the efficiency of its fp32 curve's largest point. The H200's fp32
  // peak is its best measured fp32 GEMM, 53.48 TFLOP/s, and its largest fp32 point 0.980 of
  // that: 52.4 TFLOP/s.
  const ClusterProfile h200 =
      io::load_profile(std::string(DTPERF_VALIDATION_DATA) + "/../../profiles/calibrated/h200-1gpu.json");
  CHECK_THAT(compute_params(h200, DType::tf32).fused_attention_flops_per_s, WithinRel(53.48e12 * 0.980, 1e-3));
}

TEST_CASE("a fused attention kernel's products on partly filled tiles take time, not FLOPs", "[compute][flops]") {
  // 1 GFLOP of products, all inside a fused attention kernel, which computes 0.5 GFLOP more
  // on partly filled tiles (1.25 GFLOP more in backward, its 2.5 GFLOP of products).
  const ModelSpec m = model_of("attention", {attention_tensor(1e9, 1e9, 0.5e9)});
  Buffers b(m);
  const ComputeRequest request = flops_request();
  ComputeParams p = simple_params();
  // At 0.25 of the 1 TFLOP/s peak: 1.5 GFLOP in 6 ms forward, 3.75 GFLOP in 15 ms backward.
  p.fused_attention_flops_per_s = 0.25e12;
  compute_times(m, p, request, b.times);
  CHECK_THAT(b.times.forward_s, WithinRel(6e-3, 1e-9));
  CHECK_THAT(b.backward[0], WithinRel(15e-3, 1e-9));
  // Without a fused-attention rate, as GEMMs: forward one GEMM of 1.5 GFLOP at eff
  // 0.5 x 1.5 / 2.5 = 0.3, 5 ms; backward 3.75 GFLOP in two GEMMs of 1.875 GFLOP at eff
  // 0.5 x 1.875 / 2.875, 11.5 ms.
  p.fused_attention_flops_per_s = 0.0;
  compute_times(m, p, request, b.times);
  CHECK_THAT(b.times.forward_s, WithinRel(5e-3, 1e-9));
  CHECK_THAT(b.backward[0], WithinRel(3.75e9 / (1e12 * 0.5 * 1.875 / 2.875), 1e-9));
}

TEST_CASE("matrix products over misaligned rows run at their own rate", "[compute][flops]") {
  TensorSpec t;
  t.name = "head.weight";
  t.params = 1000;
  // 2 GFLOP of products forward, 1 GFLOP of them over rows not aligned to 16 bytes;
  // backward 4 GFLOP of products, half of them misaligned as forward.
  t.forward_flops_per_sample = 2e9;
  t.forward_gemm_flops_per_sample = 2e9;
  t.forward_misaligned_gemm_flops_per_sample = 1e9;
  t.backward_flops_per_sample = 4e9;
  const ModelSpec m = model_of("head", {t});
  Buffers b(m);
  ComputeParams p = simple_params();
  // Aligned at the size of the whole: eff 0.5 x 2 / 3 of 1 TFLOP/s, 0.333 TFLOP/s; the
  // misaligned GFLOP at 0.1 TFLOP/s: 10 ms + 1 GFLOP aligned 3 ms = 13 ms.
  p.misaligned_gemm_flops_per_s = 0.1e12;
  compute_times(m, p, flops_request(), b.times);
  CHECK_THAT(b.times.forward_s, WithinRel(13e-3, 1e-9));
  // Backward: two 2-GFLOP GEMMs (eff 1/3); 2 GFLOP misaligned at 0.1 TFLOP/s, 20 ms, and
  // 2 GFLOP aligned, 6 ms.
  CHECK_THAT(b.backward[0], WithinRel(26e-3, 1e-9));
  // Never faster than aligned: at 10 TFLOP/s the whole is one aligned GEMM's 6 ms.
  p.misaligned_gemm_flops_per_s = 10e12;
  compute_times(m, p, flops_request(), b.times);
  CHECK_THAT(b.times.forward_s, WithinRel(6e-3, 1e-9));
  // The profiles' rates: fractions of the dtype's peak measured on one H200 (compute_params).
  const ClusterProfile h100 = io::load_profile("dgx-h100");
  CHECK_THAT(compute_params(h100, DType::tf32).misaligned_gemm_flops_per_s, WithinRel(0.253 * 494.7e12, 1e-9));
  CHECK(compute_params(h100, DType::tf32).partly_aligned_gemm_flops_per_s == 0.0);
  CHECK_THAT(compute_params(h100, DType::bf16).misaligned_gemm_flops_per_s, WithinRel(0.129 * 989.4e12, 1e-9));
  CHECK_THAT(compute_params(h100, DType::bf16).partly_aligned_gemm_flops_per_s, WithinRel(0.237 * 989.4e12, 1e-9));
  CHECK(compute_params(h100, DType::fp32).misaligned_gemm_flops_per_s == 0.0);
}

TEST_CASE("measured layer times follow the batch law", "[compute][measured]") {
  ModelSpec m = two_tensor_model();
  m.tensors[0].measured_backward_s = 1e-3;
  m.tensors[1].measured_backward_s = 5e-6;  // below the 10 us dispatch floor
  m.measured_batch_per_gpu = 32;
  Buffers b(m);
  ComputeRequest request;
  request.batch_per_gpu = 64;
  compute_times(m, simple_params(), request, b.times);
  CHECK(b.times.source == ComputeSource::measured_layers);
  // t(b) = max(min(floor, t0), t0 x b/b0): 1 ms x 64/32 = 2 ms; 5 us x 2 = 10 us.
  CHECK_THAT(b.backward[0], WithinRel(2e-3, 1e-12));
  CHECK_THAT(b.backward[1], WithinRel(10e-6, 1e-12));
  // No measured iteration: forward is half the measured backward (1.005 ms / 2 at batch
  // 32), doubled with the batch: 1.005 ms.
  CHECK_THAT(b.times.forward_s, WithinRel(1.005e-3, 1e-9));
  // Halving the batch stops at the floor: 5 us stays 5 us (it was below the floor).
  request.batch_per_gpu = 16;
  compute_times(m, simple_params(), request, b.times);
  CHECK_THAT(b.backward[0], WithinRel(0.5e-3, 1e-12));
  CHECK_THAT(b.backward[1], WithinRel(5e-6, 1e-12));
}

TEST_CASE("a measured iteration time leaves forward as the remainder for layer logs", "[compute][measured]") {
  ModelSpec m = two_tensor_model();
  m.tensors[0].measured_backward_s = 1e-3;
  m.tensors[1].measured_backward_s = 1e-3;
  Buffers b(m);
  ComputeRequest request;
  request.batch_per_gpu = 32;
  request.optimizer = Optimizer::sgd;
  request.single_gpu_iteration_s = 10e-3;
  compute_times(m, simple_params(), request, b.times);
  // 10 ms - 2 ms backward - 120.12 us optimizer = 7.87988 ms forward; the total is 10 ms.
  CHECK_THAT(b.times.forward_s, WithinRel(10e-3 - 2e-3 - 120.12e-6, 1e-9));
  CHECK_THAT(b.times.iteration_s(), WithinRel(10e-3, 1e-12));

  request.single_gpu_iteration_s = 1e-3;  // shorter than the measured backward
  CHECK_THROWS_AS(compute_times(m, simple_params(), request, b.times), std::invalid_argument);
}

TEST_CASE("a measured iteration time is spread over the tensors by FLOPs", "[compute][measured]") {
  const ModelSpec m = two_tensor_model();
  Buffers b(m);
  ComputeRequest request;
  request.source = ComputeSource::measured_iteration;
  request.batch_per_gpu = 32;
  request.optimizer = Optimizer::sgd;
  request.single_gpu_iteration_s = 100e-3 + 120.12e-6;  // 100 ms of compute + the step
  compute_times(m, simple_params(), request, b.times);
  // FLOPs: 1e9 + 2e9 + 1e6 + 2e6 = 3.003e9. fc backward gets 2e9/3.003e9 of 100 ms.
  CHECK_THAT(b.backward[0], WithinRel(100e-3 * 2e9 / 3.003e9, 1e-9));
  CHECK_THAT(b.times.forward_s, WithinRel(100e-3 * 1.001e9 / 3.003e9, 1e-9));
  CHECK_THAT(b.times.iteration_s(), WithinRel(request.single_gpu_iteration_s.value(), 1e-9));
}

TEST_CASE("the optimizer step counts passes over parameters and state", "[compute]") {
  const ComputeParams p = simple_params();
  // Adam: read p, g, m, v and write p, m, v = 7 passes. 1e6 fp32 params = 28 MB at
  // 100 GB/s = 280 us (above the 10 us floor).
  CHECK_THAT(optimizer_step_s(p, Optimizer::adam, 1e6, 4), WithinRel(280e-6, 1e-12));
  CHECK_THAT(optimizer_step_s(p, Optimizer::sgd_momentum, 1e6, 4), WithinRel(200e-6, 1e-12));
  // A tiny step costs the floor.
  CHECK_THAT(optimizer_step_s(p, Optimizer::adam, 10, 4), WithinRel(10e-6, 1e-12));
}

TEST_CASE("the compute scale multiplies forward and backward only", "[compute]") {
  const ModelSpec m = two_tensor_model();
  Buffers one(m);
  Buffers two(m);
  ComputeParams p = simple_params();
  ComputeRequest request;
  request.source = ComputeSource::flops;
  compute_times(m, p, request, one.times);
  p.compute_scale = 2.0;
  compute_times(m, p, request, two.times);
  CHECK_THAT(two.times.forward_s, WithinRel(2 * one.times.forward_s, 1e-12));
  CHECK_THAT(two.times.backward_total_s, WithinRel(2 * one.times.backward_total_s, 1e-12));
  CHECK(two.times.optimizer_s == one.times.optimizer_s);
}

TEST_CASE("a dtype without a peak is an input error naming the input, not a crash", "[compute]") {
  ClusterProfile profile = io::load_profile("dgx-a100");
  profile.gpu.peak_flops_per_s.erase(DType::fp32);
  try {
    (void)compute_params(profile, DType::fp32);
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.input() == "dtype");
    CHECK(std::string(e.reason()).starts_with("profile 'dgx-a100' has no fp32 peak for its GPU"));
  }
}

TEST_CASE("the compute-times cache gives compute_times' values and recomputes when an input changes",
          "[compute]") {
  const ModelSpec m = two_tensor_model();
  ComputeRequest request = flops_request();
  ComputeTimesCache cache;
  Buffers cached(m);
  const auto fresh = [&](const ComputeParams& p, const ComputeRequest& r) {
    Buffers b(m);
    compute_times(m, p, r, b.times);
    return std::vector<double>{b.times.forward_s, b.times.backward_total_s, b.times.optimizer_s, b.backward[0],
                               b.backward[1]};
  };
  const auto from_cache = [&](const ComputeParams& p, const ComputeRequest& r) {
    cached.times.forward_s = -1.0;  // a call must set every value, from the cache or afresh
    cache.get(m, p, r, cached.times);
    return std::vector<double>{cached.times.forward_s, cached.times.backward_total_s, cached.times.optimizer_s,
                               cached.backward[0], cached.backward[1]};
  };
  ComputeParams p = simple_params();
  // First call, the same again (kept), a parameter changed (forward 4.1 ms at GEMM
  // efficiency 0.5 x 1/2 becomes 2.1 ms at 1 x 1/2), back, another batch, another curve.
  CHECK(from_cache(p, request) == fresh(p, request));
  CHECK(from_cache(p, request) == fresh(p, request));
  CHECK_THAT(cached.times.forward_s, WithinRel(4e-3 + 100e-6, 1e-9));
  p.gemm_efficiency = 1.0;
  CHECK(from_cache(p, request) == fresh(p, request));
  CHECK_THAT(cached.times.forward_s, WithinRel(2e-3 + 100e-6, 1e-9));
  p.gemm_efficiency = 0.5;
  CHECK(from_cache(p, request) == fresh(p, request));
  request.batch_per_gpu = 2;
  CHECK(from_cache(p, request) == fresh(p, request));
  const std::vector<std::pair<double, double>> curve = {{1e8, 0.2}, {1e10, 0.6}};
  p.efficiency_curve = curve;
  CHECK(from_cache(p, request) == fresh(p, request));
  const std::vector<std::pair<double, double>> other_curve = {{1e8, 0.1}, {1e10, 0.3}};
  p.efficiency_curve = other_curve;  // another table: recomputed, slower
  const double before_s = cached.times.forward_s;
  CHECK(from_cache(p, request) == fresh(p, request));
  CHECK(cached.times.forward_s > before_s);
  // The scales are applied on every call to the times kept before them: forward x 2,
  // backward x 1.5.
  const std::vector<double> unscaled = fresh(p, request);
  p.forward_scale = 2.0;
  p.backward_scale = 1.5;
  CHECK(from_cache(p, request) == fresh(p, request));
  CHECK_THAT(cached.times.forward_s, WithinRel(2.0 * unscaled[0], 1e-12));
  CHECK_THAT(cached.times.backward_total_s, WithinRel(1.5 * unscaled[1], 1e-12));
  p.interference_factor = 1.3;  // read by the engines, not by compute_times
  CHECK(from_cache(p, request) == fresh(p, request));
  request.recompute_activations = true;
  CHECK(from_cache(p, request) == fresh(p, request));
  request.accumulation_steps = 3;
  CHECK(from_cache(p, request) == fresh(p, request));
  CHECK(cached.times.accumulation_s > 0.0);
  // The caller's buffer written over between calls: filled again from the kept times.
  cached.backward[0] = cached.backward[1] = -1.0;
  CHECK(from_cache(p, request) == fresh(p, request));
}
