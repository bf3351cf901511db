#include "cuda_check.hpp"

#include "../error.hpp"

namespace dtperf::calibrate {

namespace {

thread_local std::string t_context = "this rank";

[[noreturn]] void fail(const char* library, const char* call, const std::string& reason) {
  throw CalibrationError(std::string(library) + " call " + call + " failed on " + t_context + ": " + reason);
}

}  // namespace

void set_check_context(const std::string& context) { t_context = context; }

void check_cuda(cudaError_t status, const char* call) {
  if (status == cudaSuccess) return;
  fail("CUDA", call, std::string(cudaGetErrorName(status)) + " (" + cudaGetErrorString(status) + ")");
}

void check_cublas(cublasStatus_t status, const char* call) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  fail("cuBLAS", call, cublasGetStatusString(status));
}

void check_nccl(ncclResult_t status, const char* call, ncclComm_t comm) {
  if (status == ncclSuccess) return;
  std::string reason = ncclGetErrorString(status);
  const char* detail = ncclGetLastError(comm);
  if (detail != nullptr && *detail != '\0') reason += std::string(": ") + detail;
  fail("NCCL", call, reason);
}

}  // namespace dtperf::calibrate
