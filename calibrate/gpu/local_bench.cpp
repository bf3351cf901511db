// The GPU backend's per-rank benchmarks: GEMMs (gemm.hpp), device copies and the fixed
// workload whose repeated timings give the iteration spread.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "../error.hpp"
#include "cuda_check.hpp"
#include "device_memory.hpp"
#include "gemm.hpp"
#include "gpu_ops.hpp"

namespace dtperf::calibrate {

namespace {

class GemmOps : public TimedOps {
 public:
  GemmOps(GpuRank& rank, const PlanEntry& entry)
      : TimedOps(rank.stream), gemm_(rank.stream, entry.dtype), dtype_(entry.dtype), shapes_(entry.shapes) {
    std::size_t a = 0, b = 0, c = 0;
    for (const GemmShape& s : shapes_) {
      a = std::max(a, static_cast<std::size_t>(s.m * s.k));
      b = std::max(b, static_cast<std::size_t>(s.k * s.n));
      c = std::max(c, static_cast<std::size_t>(s.m * s.n));
    }
    const std::size_t element_bytes = gemm_element_bytes(dtype_);
    a_ = DeviceBuffer(a * element_bytes);
    b_ = DeviceBuffer(b * element_bytes);
    c_ = DeviceBuffer(c * gemm_output_bytes(dtype_));
    fill_gemm_operand(a_.get(), a, dtype_, stream_);
    fill_gemm_operand(b_.get(), b, dtype_, stream_);
  }

  /// GEMM results are not compared: a failed call throws, and that is the check.
  bool run_checked(std::size_t point) override {
    run(point, 1);
    return true;
  }

 protected:
  void enqueue(std::size_t point) override { gemm_.run(shapes_.at(point), a_.get(), b_.get(), c_.get()); }

 private:
  Gemm gemm_;
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
  Gemm gemm(rank.stream, "bf16");
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
    for (int g = 0; g < 4; ++g) gemm.run(shape, a.get(), b.get(), c.get());
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
