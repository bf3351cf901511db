#pragma once
// The GPU backend's measured operations. All work is enqueued on the rank's stream and
// timed with CUDA events around the timed calls (mean per call); warm-up calls are waited
// for with a stream synchronisation.
//   all_reduce: ncclAllReduce of float32 (sum), out of place, on a communicator split from
//     the world for the entry; checked against the exact sum of every member's pattern.
//   sendrecv:   ncclSend + ncclRecv with the peer in one group on the world communicator;
//     `bytes` is what each rank sends; checked against the peer's pattern.
//   gemm:       cuBLAS / cuBLASLt GEMMs of each dtype (gemm.hpp).
//   copy:       cudaMemcpyAsync device to device; checked at both ends of the buffer.
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "../plan.hpp"
#include "../runner.hpp"
#include "../sweep.hpp"
#include "gpu_launch.hpp"

namespace dtperf::calibrate {

/// Runs and times enqueued work on one stream; subclasses say what one call enqueues.
class TimedOps : public PointOps {
 public:
  explicit TimedOps(cudaStream_t stream);
  ~TimedOps() override;
  void run(std::size_t point, int calls) override;
  double time_s(std::size_t point, int calls) override;

 protected:
  virtual void enqueue(std::size_t point) = 0;
  cudaStream_t stream_;

 private:
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
};

/// Element-wise max over the world through ncclAllReduce(ncclMax) on the world communicator.
class NcclControl : public Control {
 public:
  explicit NcclControl(GpuRank& rank);
  ~NcclControl() override;
  int rank() const override { return rank_.rank; }
  int world_size() const override { return rank_.world_size; }
  void max_all(std::vector<double>& values) override;

 private:
  GpuRank& rank_;
  double* device_values_ = nullptr;
  std::size_t capacity_ = 0;
};

/// `comm` is owned by the ops (destroyed with them); `rank_sum` = sum of (member rank + 1).
std::unique_ptr<PointOps> make_nccl_all_reduce_ops(GpuRank& rank, ncclComm_t comm, int rank_sum,
                                                   const std::vector<std::uint64_t>& sizes_bytes);
std::unique_ptr<PointOps> make_nccl_sendrecv_ops(GpuRank& rank, int peer, const std::vector<std::uint64_t>& sizes_bytes);
std::unique_ptr<PointOps> make_gemm_ops(GpuRank& rank, const PlanEntry& entry);
std::unique_ptr<PointOps> make_copy_ops(GpuRank& rank, const std::vector<std::uint64_t>& sizes_bytes);

/// This rank's contention timings (contention.cpp): the plan's GEMM and an all-reduce of
/// `bytes` on the world communicator, each alone and beside the other.
ContentionSample gpu_contention_sample(GpuRank& rank, Control& control, std::uint64_t bytes);

/// Seconds of each of `iterations` runs of the fixed workload (4 bf16 GEMMs of 2048^3 and a
/// 64 MiB device copy), after `warmup` runs.
std::vector<double> gpu_spread_samples_s(GpuRank& rank, int warmup, int iterations);

}  // namespace dtperf::calibrate
