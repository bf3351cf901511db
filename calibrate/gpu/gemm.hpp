#pragma once
// One GEMM of a fixed dtype on a stream, column-major C(m x n) = A(m x k) B(k x n):
// cublasGemmEx for fp32 (CUBLAS_COMPUTE_32F, no TF32), tf32 (CUBLAS_COMPUTE_32F_FAST_TF32),
// fp16 and bf16 (float accumulation, output in the operands' type); cuBLASLt for fp8 (E4M3
// operands, bfloat16 output, float accumulation; cuBLASLt's "TN" layout, A stored k x m).
// Operand sizes: gemm_element_bytes / gemm_output_bytes (device_memory.hpp).
#include <cuda_runtime.h>

#include <memory>
#include <string>

#include "../plan.hpp"

namespace dtperf::calibrate {

class Gemm {
 public:
  Gemm(cudaStream_t stream, const std::string& dtype);
  ~Gemm();
  Gemm(const Gemm&) = delete;
  Gemm& operator=(const Gemm&) = delete;
  /// Enqueues one GEMM of `shape` (alpha 1, beta 0) on the stream.
  void run(const GemmShape& shape, const void* a, const void* b, void* c);

 private:
  class Cublas;
  class CublasLtFp8;
  std::string dtype_;
  std::unique_ptr<Cublas> cublas_;
  std::unique_ptr<CublasLtFp8> fp8_;
};

}  // namespace dtperf::calibrate
