#pragma once
// Every CUDA runtime, cuBLAS and NCCL call of the GPU backend goes through one of these
// checks: a failure throws CalibrationError naming the call, the device's rank and the
// library's own explanation ("cudaMalloc(&buffer, bytes) on rank 3: out of memory").
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include <string>

namespace dtperf::calibrate {

/// Where the calling thread's checks say they happened ("rank 3"); set once per rank.
void set_check_context(const std::string& context);

void check_cuda(cudaError_t status, const char* call);
void check_cublas(cublasStatus_t status, const char* call);
/// `comm` (may be null) adds ncclGetLastError's detail to the message.
void check_nccl(ncclResult_t status, const char* call, ncclComm_t comm = nullptr);

}  // namespace dtperf::calibrate

#define DTPERF_CUDA(call) ::dtperf::calibrate::check_cuda((call), #call)
#define DTPERF_CUBLAS(call) ::dtperf::calibrate::check_cublas((call), #call)
#define DTPERF_NCCL(call) ::dtperf::calibrate::check_nccl((call), #call)
#define DTPERF_NCCL_ON(comm, call) ::dtperf::calibrate::check_nccl((call), #call, (comm))
