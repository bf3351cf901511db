// NCCL collectives, the world control exchange and the timing base of the GPU backend.
#include <algorithm>
#include <cstdint>

#include "cuda_check.hpp"
#include "device_memory.hpp"
#include "gpu_ops.hpp"

namespace dtperf::calibrate {

TimedOps::TimedOps(cudaStream_t stream) : stream_(stream) {
  DTPERF_CUDA(cudaEventCreate(&start_));
  DTPERF_CUDA(cudaEventCreate(&stop_));
}

TimedOps::~TimedOps() {
  cudaEventDestroy(start_);
  cudaEventDestroy(stop_);
}

void TimedOps::run(std::size_t point, int calls) {
  for (int c = 0; c < calls; ++c) enqueue(point);
  DTPERF_CUDA(cudaStreamSynchronize(stream_));
}

double TimedOps::time_s(std::size_t point, int calls) {
  if (calls <= 0) return 0.0;
  DTPERF_CUDA(cudaEventRecord(start_, stream_));
  for (int c = 0; c < calls; ++c) enqueue(point);
  DTPERF_CUDA(cudaEventRecord(stop_, stream_));
  DTPERF_CUDA(cudaEventSynchronize(stop_));
  float elapsed_ms = 0.0f;
  DTPERF_CUDA(cudaEventElapsedTime(&elapsed_ms, start_, stop_));
  return static_cast<double>(elapsed_ms) * 1e-3 / calls;
}

NcclControl::NcclControl(GpuRank& rank) : rank_(rank) {}

NcclControl::~NcclControl() {
  if (device_values_ != nullptr) cudaFree(device_values_);
}

void NcclControl::max_all(std::vector<double>& values) {
  if (values.empty()) return;
  if (values.size() > capacity_) {
    if (device_values_ != nullptr) DTPERF_CUDA(cudaFree(device_values_));
    capacity_ = std::max<std::size_t>(values.size(), 1024);
    DTPERF_CUDA(cudaMalloc(reinterpret_cast<void**>(&device_values_), capacity_ * sizeof(double)));
  }
  const std::size_t bytes = values.size() * sizeof(double);
  DTPERF_CUDA(cudaMemcpyAsync(device_values_, values.data(), bytes, cudaMemcpyHostToDevice, rank_.stream));
  DTPERF_NCCL_ON(rank_.world, ncclAllReduce(device_values_, device_values_, values.size(), ncclFloat64, ncclMax,
                                            rank_.world, rank_.stream));
  DTPERF_CUDA(cudaMemcpyAsync(values.data(), device_values_, bytes, cudaMemcpyDeviceToHost, rank_.stream));
  DTPERF_CUDA(cudaStreamSynchronize(rank_.stream));
}

namespace {

std::size_t largest_bytes(const std::vector<std::uint64_t>& sizes_bytes) {
  return sizes_bytes.empty() ? 0 : static_cast<std::size_t>(*std::max_element(sizes_bytes.begin(), sizes_bytes.end()));
}

class AllReduceOps : public TimedOps {
 public:
  AllReduceOps(GpuRank& rank, ncclComm_t comm, int rank_sum, const std::vector<std::uint64_t>& sizes_bytes)
      : TimedOps(rank.stream), comm_(comm), rank_sum_(rank_sum), sizes_bytes_(sizes_bytes),
        send_(largest_bytes(sizes_bytes)), recv_(send_.bytes()) {
    fill_pattern(send_.floats(), send_.bytes() / sizeof(float), rank.rank + 1, stream_);
  }
  ~AllReduceOps() override { ncclCommDestroy(comm_); }

  bool run_checked(std::size_t point) override {
    DTPERF_CUDA(cudaMemsetAsync(recv_.get(), 0xff, sizes_bytes_.at(point), stream_));
    run(point, 1);
    return check_pattern(recv_.floats(), count(point), rank_sum_, stream_);
  }

 protected:
  void enqueue(std::size_t point) override {
    DTPERF_NCCL_ON(comm_, ncclAllReduce(send_.get(), recv_.get(), count(point), ncclFloat32, ncclSum, comm_, stream_));
  }

 private:
  std::size_t count(std::size_t point) const { return static_cast<std::size_t>(sizes_bytes_.at(point) / sizeof(float)); }

  ncclComm_t comm_;
  int rank_sum_;
  std::vector<std::uint64_t> sizes_bytes_;
  DeviceBuffer send_, recv_;
};

class SendRecvOps : public TimedOps {
 public:
  SendRecvOps(GpuRank& rank, int peer, const std::vector<std::uint64_t>& sizes_bytes)
      : TimedOps(rank.stream), comm_(rank.world), peer_(peer), sizes_bytes_(sizes_bytes),
        send_(largest_bytes(sizes_bytes)), recv_(send_.bytes()) {
    fill_pattern(send_.floats(), send_.bytes() / sizeof(float), rank.rank + 1, stream_);
  }

  bool run_checked(std::size_t point) override {
    DTPERF_CUDA(cudaMemsetAsync(recv_.get(), 0xff, sizes_bytes_.at(point), stream_));
    run(point, 1);
    return check_pattern(recv_.floats(), count(point), peer_ + 1, stream_);
  }

 protected:
  void enqueue(std::size_t point) override {
    DTPERF_NCCL_ON(comm_, ncclGroupStart());
    DTPERF_NCCL_ON(comm_, ncclSend(send_.get(), count(point), ncclFloat32, peer_, comm_, stream_));
    DTPERF_NCCL_ON(comm_, ncclRecv(recv_.get(), count(point), ncclFloat32, peer_, comm_, stream_));
    DTPERF_NCCL_ON(comm_, ncclGroupEnd());
  }

 private:
  std::size_t count(std::size_t point) const { return static_cast<std::size_t>(sizes_bytes_.at(point) / sizeof(float)); }

  ncclComm_t comm_;
  int peer_;
  std::vector<std::uint64_t> sizes_bytes_;
  DeviceBuffer send_, recv_;
};

}  // namespace

std::unique_ptr<PointOps> make_nccl_all_reduce_ops(GpuRank& rank, ncclComm_t comm, int rank_sum,
                                                   const std::vector<std::uint64_t>& sizes_bytes) {
  try {
    return std::make_unique<AllReduceOps>(rank, comm, rank_sum, sizes_bytes);
  } catch (...) {
    ncclCommDestroy(comm);
    throw;
  }
}

std::unique_ptr<PointOps> make_nccl_sendrecv_ops(GpuRank& rank, int peer, const std::vector<std::uint64_t>& sizes_bytes) {
  return std::make_unique<SendRecvOps>(rank, peer, sizes_bytes);
}

}  // namespace dtperf::calibrate
