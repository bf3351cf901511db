// cuBLAS and cuBLASLt GEMMs (gemm.hpp).
#include "gemm.hpp"

#include <cublasLt.h>
#include <cublas_v2.h>

#include <cstdint>
#include <vector>

#include "../error.hpp"
#include "cuda_check.hpp"
#include "device_memory.hpp"

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

}  // namespace

/// One cuBLAS handle on the stream, default math mode (TF32 only when asked for).
class Gemm::Cublas {
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

/// FP8 GEMMs through cuBLASLt, which alone offers them: E4M3 operands, bfloat16 output,
/// float accumulation and scale type, unit scales. cuBLASLt's FP8 layout is "TN": A is
/// stored k x m and transposed, B k x n, C m x n, all column-major, every dimension a
/// multiple of 16. The algorithm is cuBLASLt's first heuristic choice for the shape with a
/// 32 MiB workspace (cuBLAS's default on Hopper), chosen once per shape.
class Gemm::CublasLtFp8 {
 public:
  explicit CublasLtFp8(cudaStream_t stream) : stream_(stream), workspace_(kWorkspaceBytes) {
    DTPERF_CUBLAS(cublasLtCreate(&handle_));
  }
  ~CublasLtFp8() {
    for (Plan& plan : plans_) plan.destroy();
    cublasLtDestroy(handle_);
  }
  CublasLtFp8(const CublasLtFp8&) = delete;
  CublasLtFp8& operator=(const CublasLtFp8&) = delete;

  void gemm(const GemmShape& shape, const void* a, const void* b, void* c) {
    const Plan& plan = plan_for(shape);
    const float alpha = 1.0f, beta = 0.0f;
    DTPERF_CUBLAS(cublasLtMatmul(handle_, plan.operation, &alpha, a, plan.a, b, plan.b, &beta, c, plan.c, c, plan.c,
                                 &plan.algorithm, workspace_.get(), kWorkspaceBytes, stream_));
  }

 private:
  static constexpr std::size_t kWorkspaceBytes = std::size_t{32} << 20;

  struct Plan {
    std::int64_t m = 0, n = 0, k = 0;
    cublasLtMatmulDesc_t operation = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
    cublasLtMatmulAlgo_t algorithm{};
    void destroy() {
      if (c != nullptr) cublasLtMatrixLayoutDestroy(c);
      if (b != nullptr) cublasLtMatrixLayoutDestroy(b);
      if (a != nullptr) cublasLtMatrixLayoutDestroy(a);
      if (operation != nullptr) cublasLtMatmulDescDestroy(operation);
    }
  };

  const Plan& plan_for(const GemmShape& shape) {
    for (const Plan& plan : plans_) {
      if (plan.m == shape.m && plan.n == shape.n && plan.k == shape.k) return plan;
    }
    if (shape.m % 16 != 0 || shape.n % 16 != 0 || shape.k % 16 != 0) {
      throw CalibrationError("internal: FP8 GEMM dimensions must be multiples of 16");
    }
    plans_.push_back({shape.m, shape.n, shape.k});
    Plan& plan = plans_.back();
    const auto m = static_cast<std::uint64_t>(shape.m), n = static_cast<std::uint64_t>(shape.n),
               k = static_cast<std::uint64_t>(shape.k);
    DTPERF_CUBLAS(cublasLtMatmulDescCreate(&plan.operation, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    const cublasOperation_t transposed = CUBLAS_OP_T, plain = CUBLAS_OP_N;
    DTPERF_CUBLAS(cublasLtMatmulDescSetAttribute(plan.operation, CUBLASLT_MATMUL_DESC_TRANSA, &transposed,
                                                 sizeof transposed));
    DTPERF_CUBLAS(cublasLtMatmulDescSetAttribute(plan.operation, CUBLASLT_MATMUL_DESC_TRANSB, &plain, sizeof plain));
    DTPERF_CUBLAS(cublasLtMatrixLayoutCreate(&plan.a, CUDA_R_8F_E4M3, k, m, static_cast<std::int64_t>(k)));
    DTPERF_CUBLAS(cublasLtMatrixLayoutCreate(&plan.b, CUDA_R_8F_E4M3, k, n, static_cast<std::int64_t>(k)));
    DTPERF_CUBLAS(cublasLtMatrixLayoutCreate(&plan.c, CUDA_R_16BF, m, n, static_cast<std::int64_t>(m)));
    cublasLtMatmulPreference_t preference = nullptr;
    DTPERF_CUBLAS(cublasLtMatmulPreferenceCreate(&preference));
    const std::size_t workspace = kWorkspaceBytes;
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    cublasStatus_t status = cublasLtMatmulPreferenceSetAttribute(
        preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof workspace);
    if (status == CUBLAS_STATUS_SUCCESS) {
      status = cublasLtMatmulAlgoGetHeuristic(handle_, plan.operation, plan.a, plan.b, plan.c, plan.c, preference, 1,
                                              &result, &found);
    }
    cublasLtMatmulPreferenceDestroy(preference);
    DTPERF_CUBLAS(status);
    if (found == 0) throw CalibrationError("cuBLASLt offers no FP8 GEMM algorithm for this GPU");
    plan.algorithm = result.algo;
    return plan;
  }

  cudaStream_t stream_;
  cublasLtHandle_t handle_ = nullptr;
  DeviceBuffer workspace_;
  std::vector<Plan> plans_;
};

Gemm::Gemm(cudaStream_t stream, const std::string& dtype) : dtype_(dtype) {
  if (dtype_ == "fp8") {
    fp8_ = std::make_unique<CublasLtFp8>(stream);
  } else {
    cublas_ = std::make_unique<Cublas>(stream);
  }
}

Gemm::~Gemm() = default;

void Gemm::run(const GemmShape& shape, const void* a, const void* b, void* c) {
  if (fp8_) {
    fp8_->gemm(shape, a, b, c);
  } else {
    cublas_->gemm(shape, dtype_, a, b, c);
  }
}

}  // namespace dtperf::calibrate
