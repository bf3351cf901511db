// The GPU backend's per-rank benchmarks: cuBLAS GEMMs, device copies and the fixed
// workload whose repeated timings give the iteration spread.
#include <cublas_v2.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "../error.hpp"
#include "cuda_check.hpp"
#include "device_memory.hpp"
#include "gpu_ops.hpp"

namespace dtperf::calibrate {

namespace {

struct GemmTypes {
  cudaDataType_t data;
  cublasComputeType_t compute;
};

GemmTypes gemm_types(const std::string& dtype) {
  if (dtype == "fp32") return {CUDA_R_32F, CUBLAS_COMPUTE_32F};
  if (dtype == "tf32") return {CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32};
  if (dtype == "fp16") return {CUDA_R_16F, CUBLAS_COMPUTE_32F};
  if (dtype == "bf16") return {CUDA_R_16BF, CUBLAS_COMPUTE_32F};
  throw CalibrationError("internal: no GEMM dtype '" + dtype + "'");
}

/// One cuBLAS handle on the rank's stream, default math mode (TF32 only when asked for).
class Cublas {
 public:
  explicit Cublas(cudaStream_t stream) {
    DTPERF_CUBLAS(cublasCreate(&handle_));
    DTPERF_CUBLAS(cublasSetStream(handle_, stream));
    DTPERF_CUBLAS(cublasSetMathMode(handle_, CUBLAS_DEFAULT_MATH));
  }
  ~Cublas() { cublasDestroy(handle_); }
  Cublas(const Cublas&) = delete;
  Cublas& operator=(const Cublas&) = delete;

  /// C(m x n) = A(m x k) * B(k x n), column-major, alpha 1, beta 0, float scalars.
  void gemm(const GemmShape& shape, const std::string& dtype, const void* a, const void* b, void* c) {
    const GemmTypes types = gemm_types(dtype);
    const float alpha = 1.0f, beta = 0.0f;
    const int m = static_cast<int>(shape.m), n = static_cast<int>(shape.n), k = static_cast<int>(shape.k);
    DTPERF_CUBLAS(cublasGemmEx(handle_, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, a, types.data, m, b, types.data, k,
                               &beta, c, types.data, m, types.compute, CUBLAS_GEMM_DEFAULT));
  }

 private:
  cublasHandle_t handle_ = nullptr;
};

class GemmOps : public TimedOps {
 public:
  GemmOps(GpuRank& rank, const PlanEntry& entry)
      : TimedOps(rank.stream), cublas_(rank.stream), dtype_(entry.dtype), shapes_(entry.shapes) {
    std::size_t a = 0, b = 0, c = 0;
    for (const GemmShape& s : shapes_) {
      a = std::max(a, static_cast<std::size_t>(s.m * s.k));
      b = std::max(b, static_cast<std::size_t>(s.k * s.n));
      c = std::max(c, static_cast<std::size_t>(s.m * s.n));
    }
    const std::size_t element_bytes = gemm_element_bytes(dtype_);
    a_ = DeviceBuffer(a * element_bytes);
    b_ = DeviceBuffer(b * element_bytes);
    c_ = DeviceBuffer(c * element_bytes);
    fill_gemm_operand(a_.get(), a, dtype_, stream_);
    fill_gemm_operand(b_.get(), b, dtype_, stream_);
  }

  /// GEMM results are not compared: a failed call throws, and that is the check.
  bool run_checked(std::size_t point) override {
    run(point, 1);
    return true;
  }

 protected:
  void enqueue(std::size_t point) override { cublas_.gemm(shapes_.at(point), dtype_, a_.get(), b_.get(), c_.get()); }

 private:
  Cublas cublas_;
  std::string dtype_;
  std::vector<GemmShape> shapes_;
  DeviceBuffer a_, b_, c_;
};

class CopyOps : public TimedOps {
 public:
  CopyOps(GpuRank& rank, const std::vector<std::uint64_t>& sizes_bytes)
      : TimedOps(rank.stream), sizes_bytes_(sizes_bytes) {
    const std::size_t largest = static_cast<std::size_t>(*std::max_element(sizes_bytes.begin(), sizes_bytes.end()));
    source_ = DeviceBuffer(largest);
    target_ = DeviceBuffer(largest);
    fill_pattern(source_.floats(), largest / sizeof(float), 1, stream_);
  }

  /// Compares the first and the last MiB (or less) of the copy with the source pattern.
  bool run_checked(std::size_t point) override {
    const std::size_t count = static_cast<std::size_t>(sizes_bytes_.at(point) / sizeof(float));
    DTPERF_CUDA(cudaMemsetAsync(target_.get(), 0xff, sizes_bytes_.at(point), stream_));
    run(point, 1);
    const std::size_t window = std::min<std::size_t>(count, 7 * (1 << 16));
    const std::size_t tail = (count - window) / 7 * 7;  // a multiple of 7 keeps the pattern's phase
    return check_pattern(target_.floats(), window, 1, stream_) &&
           check_pattern(target_.floats() + tail, count - tail, 1, stream_);
  }

 protected:
  void enqueue(std::size_t point) override {
    DTPERF_CUDA(cudaMemcpyAsync(target_.get(), source_.get(), sizes_bytes_.at(point), cudaMemcpyDeviceToDevice, stream_));
  }

 private:
  std::vector<std::uint64_t> sizes_bytes_;
  DeviceBuffer source_, target_;
};

}  // namespace

std::unique_ptr<PointOps> make_gemm_ops(GpuRank& rank, const PlanEntry& entry) {
  return std::make_unique<GemmOps>(rank, entry);
}

std::unique_ptr<PointOps> make_copy_ops(GpuRank& rank, const std::vector<std::uint64_t>& sizes_bytes) {
  return std::make_unique<CopyOps>(rank, sizes_bytes);
}

std::vector<double> gpu_spread_samples_s(GpuRank& rank, int warmup, int iterations) {
  const GemmShape shape{2048, 2048, 2048, "spread"};
  const std::size_t elements = 2048 * 2048;
  const std::size_t copy_bytes = std::size_t{64} << 20;
  Cublas cublas(rank.stream);
  DeviceBuffer a(elements * 2), b(elements * 2), c(elements * 2), source(copy_bytes), target(copy_bytes);
  fill_gemm_operand(a.get(), elements, "bf16", rank.stream);
  fill_gemm_operand(b.get(), elements, "bf16", rank.stream);
  DTPERF_CUDA(cudaMemsetAsync(source.get(), 0, copy_bytes, rank.stream));
  cudaEvent_t start = nullptr, stop = nullptr;
  DTPERF_CUDA(cudaEventCreate(&start));
  DTPERF_CUDA(cudaEventCreate(&stop));
  std::vector<double> samples_s;
  for (int i = 0; i < warmup + iterations; ++i) {
    DTPERF_CUDA(cudaEventRecord(start, rank.stream));
    for (int g = 0; g < 4; ++g) cublas.gemm(shape, "bf16", a.get(), b.get(), c.get());
    DTPERF_CUDA(cudaMemcpyAsync(target.get(), source.get(), copy_bytes, cudaMemcpyDeviceToDevice, rank.stream));
    DTPERF_CUDA(cudaEventRecord(stop, rank.stream));
    DTPERF_CUDA(cudaEventSynchronize(stop));
    float elapsed_ms = 0.0f;
    DTPERF_CUDA(cudaEventElapsedTime(&elapsed_ms, start, stop));
    if (i >= warmup) samples_s.push_back(static_cast<double>(elapsed_ms) * 1e-3);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return samples_s;
}

}  // namespace dtperf::calibrate
