#pragma once
// Device memory for the GPU backend: an owning buffer, and filling or checking buffers with
// the test patterns through a host staging chunk (the backend has no kernels of its own).
// Collective data follows the host backend's pattern: element i of rank r is
// (r + 1) * (i % 7 + 1), so sums over ranks are small integers, exact in float32.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace dtperf::calibrate {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;

  void* get() const { return pointer_; }
  float* floats() const { return static_cast<float*>(pointer_); }
  std::size_t bytes() const { return bytes_; }

 private:
  void* pointer_ = nullptr;
  std::size_t bytes_ = 0;
};

/// Writes factor * (i % 7 + 1) to the `count` floats at `device` (waits for the copies).
void fill_pattern(float* device, std::size_t count, int factor, cudaStream_t stream);

/// True when the `count` floats at `device` equal factor * (i % 7 + 1).
bool check_pattern(const float* device, std::size_t count, int factor, cudaStream_t stream);

/// GEMM operand values for `dtype` ("fp32", "tf32", "fp16", "bf16", "fp8"): the values k/16
/// for k = -8..7 in turn, stored as float or as IEEE half / bfloat16 / FP8 E4M3 bits (all
/// exact).
void fill_gemm_operand(void* device, std::size_t elements, const std::string& dtype, cudaStream_t stream);

/// Bytes per element of a GEMM operand of `dtype`, and of its output (fp8 GEMMs write
/// bfloat16, as FP8 training recipes do).
std::size_t gemm_element_bytes(const std::string& dtype);
std::size_t gemm_output_bytes(const std::string& dtype);

/// IEEE binary16 and bfloat16 bits of `value`, for values exactly representable in them.
std::uint16_t half_bits(float value);
std::uint16_t bfloat16_bits(float value);
/// OCP FP8 E4M3 bits (bias 7, 3 mantissa bits) of `value`, for normal values exactly
/// representable in it (the operands' k / 16 are).
std::uint8_t e4m3_bits(float value);

}  // namespace dtperf::calibrate
