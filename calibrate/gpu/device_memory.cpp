#include "device_memory.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "cuda_check.hpp"

namespace dtperf::calibrate {

namespace {

// Staging chunk: a multiple of 7 elements (the pattern's period) and of 16 (the GEMM's).
constexpr std::size_t kChunkElements = std::size_t{7} * 16 * (1 << 17);

/// Copies `chunk` (host) over the `total_bytes` at `device`, repeating it; waits.
void fill_repeating(void* device, std::size_t total_bytes, const void* chunk, std::size_t chunk_bytes,
                    cudaStream_t stream) {
  auto* target = static_cast<char*>(device);
  for (std::size_t offset = 0; offset < total_bytes; offset += chunk_bytes) {
    const std::size_t bytes = std::min(chunk_bytes, total_bytes - offset);
    DTPERF_CUDA(cudaMemcpyAsync(target + offset, chunk, bytes, cudaMemcpyHostToDevice, stream));
  }
  DTPERF_CUDA(cudaStreamSynchronize(stream));
}

}  // namespace

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
  if (bytes > 0) DTPERF_CUDA(cudaMalloc(&pointer_, bytes));
}

DeviceBuffer::~DeviceBuffer() {
  if (pointer_ != nullptr) cudaFree(pointer_);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : pointer_(std::exchange(other.pointer_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (pointer_ != nullptr) cudaFree(pointer_);
    pointer_ = std::exchange(other.pointer_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void fill_pattern(float* device, std::size_t count, int factor, cudaStream_t stream) {
  std::vector<float> chunk(std::min(count, kChunkElements));
  for (std::size_t i = 0; i < chunk.size(); ++i) chunk[i] = static_cast<float>(factor * static_cast<int>(i % 7 + 1));
  fill_repeating(device, count * sizeof(float), chunk.data(), chunk.size() * sizeof(float), stream);
}

bool check_pattern(const float* device, std::size_t count, int factor, cudaStream_t stream) {
  std::vector<float> chunk(std::min(count, kChunkElements));
  for (std::size_t offset = 0; offset < count; offset += chunk.size()) {
    const std::size_t elements = std::min(chunk.size(), count - offset);
    DTPERF_CUDA(cudaMemcpyAsync(chunk.data(), device + offset, elements * sizeof(float), cudaMemcpyDeviceToHost, stream));
    DTPERF_CUDA(cudaStreamSynchronize(stream));
    for (std::size_t i = 0; i < elements; ++i) {
      // offset is a multiple of 7, so element i of the chunk has the pattern index i % 7.
      if (chunk[i] != static_cast<float>(factor * static_cast<int>(i % 7 + 1))) return false;
    }
  }
  return true;
}

std::uint16_t half_bits(float value) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  const std::uint32_t sign = (bits >> 16) & 0x8000u;
  if ((bits & 0x7fffffffu) == 0) return static_cast<std::uint16_t>(sign);
  const int exponent = static_cast<int>((bits >> 23) & 0xff) - 127 + 15;
  const std::uint32_t mantissa = (bits >> 13) & 0x3ffu;
  return static_cast<std::uint16_t>(sign | (static_cast<std::uint32_t>(exponent) << 10) | mantissa);
}

std::uint16_t bfloat16_bits(float value) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  return static_cast<std::uint16_t>(bits >> 16);
}

std::uint8_t e4m3_bits(float value) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  const std::uint32_t sign = (bits >> 24) & 0x80u;
  if ((bits & 0x7fffffffu) == 0) return static_cast<std::uint8_t>(sign);
  const int exponent = static_cast<int>((bits >> 23) & 0xff) - 127 + 7;
  const std::uint32_t mantissa = (bits >> 20) & 0x7u;
  return static_cast<std::uint8_t>(sign | (static_cast<std::uint32_t>(exponent) << 3) | mantissa);
}

std::size_t gemm_element_bytes(const std::string& dtype) {
  if (dtype == "fp8") return 1;
  return dtype == "fp16" || dtype == "bf16" ? 2 : 4;
}

std::size_t gemm_output_bytes(const std::string& dtype) {
  return dtype == "fp8" ? 2 : gemm_element_bytes(dtype);
}

void fill_gemm_operand(void* device, std::size_t elements, const std::string& dtype, cudaStream_t stream) {
  const std::size_t chunk_elements = std::min(elements, kChunkElements);
  const std::size_t element_bytes = gemm_element_bytes(dtype);
  std::vector<char> chunk(chunk_elements * element_bytes);
  for (std::size_t i = 0; i < chunk_elements; ++i) {
    const float value = (static_cast<float>(i % 16) - 8.0f) / 16.0f;
    if (element_bytes == 4) {
      std::memcpy(chunk.data() + 4 * i, &value, 4);
    } else if (element_bytes == 1) {
      chunk[i] = static_cast<char>(e4m3_bits(value));
    } else {
      const std::uint16_t bits = dtype == "fp16" ? half_bits(value) : bfloat16_bits(value);
      std::memcpy(chunk.data() + 2 * i, &bits, 2);
    }
  }
  fill_repeating(device, elements * element_bytes, chunk.data(), chunk.size(), stream);
}

}  // namespace dtperf::calibrate
