// Contention per side on the GPU: a GEMM stream and an all-reduce stream, each timed alone
// and then beside the other.
//
// Each side is timed over kContentionCalls calls with CUDA events on its own stream. Beside:
// the other stream is first given enough calls to last `margin` times the timed side's
// span alone (counts agreed over the world, since an all-reduce is collective), then the
// timed calls are enqueued, so the timed span runs wholly beside the other side's work;
// `covered` checks that afterwards (the other side started no later and ended no earlier).
// A side slowed by more than the margin outlasts its cover (on an H200, a one-rank
// all-reduce ran 3.8x slower beside GEMMs), so an uncovered measurement is repeated with
// 4x the margin, up to 32x, agreed over the world.
//
// The all-reduce is float32 sum, out of place, on the world communicator; on a one-rank
// world NCCL copies locally, so that case measures memory-bandwidth and SM sharing with a
// copy, not with a link's collective.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include "cuda_check.hpp"
#include "device_memory.hpp"
#include "gemm.hpp"
#include "gpu_ops.hpp"

namespace dtperf::calibrate {

namespace {

class Event {
 public:
  Event() { DTPERF_CUDA(cudaEventCreate(&event_)); }
  ~Event() { cudaEventDestroy(event_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

double elapsed_s(const Event& from, const Event& to) {
  float ms = 0.0f;
  DTPERF_CUDA(cudaEventElapsedTime(&ms, from.get(), to.get()));
  return static_cast<double>(ms) * 1e-3;
}

class Stream {
 public:
  Stream() { DTPERF_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  ~Stream() { cudaStreamDestroy(stream_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

/// `calls` calls of `enqueue` on `stream` between two events.
void bracket(cudaStream_t stream, const Event& start, const Event& stop, int calls,
             const std::function<void(cudaStream_t)>& enqueue) {
  DTPERF_CUDA(cudaEventRecord(start.get(), stream));
  for (int c = 0; c < calls; ++c) enqueue(stream);
  DTPERF_CUDA(cudaEventRecord(stop.get(), stream));
}

}  // namespace

ContentionSample gpu_contention_sample(GpuRank& rank, Control& control, std::uint64_t bytes) {
  const GemmShape& shape = kContentionGemm;
  const auto square = static_cast<std::size_t>(shape.m * shape.k);
  DeviceBuffer a(square * 2), b(square * 2), c(square * 2);
  fill_gemm_operand(a.get(), square, kContentionDtype, rank.stream);
  fill_gemm_operand(b.get(), square, kContentionDtype, rank.stream);
  const std::size_t count = static_cast<std::size_t>(bytes / sizeof(float));
  DeviceBuffer send(count * sizeof(float)), recv(count * sizeof(float));
  fill_pattern(send.floats(), count, 1, rank.stream);
  Stream comm_stream;
  Gemm gemm_on_compute(rank.stream, kContentionDtype);
  const auto gemm = [&](cudaStream_t) { gemm_on_compute.run(shape, a.get(), b.get(), c.get()); };
  const auto all_reduce = [&](cudaStream_t stream) {
    DTPERF_NCCL_ON(rank.world, ncclAllReduce(send.get(), recv.get(), count, ncclFloat32, ncclSum, rank.world, stream));
  };
  const cudaStream_t compute = rank.stream, comm = comm_stream.get();
  const auto wait = [&] {
    DTPERF_CUDA(cudaStreamSynchronize(compute));
    DTPERF_CUDA(cudaStreamSynchronize(comm));
  };
  const auto together = [&] {
    std::vector<double> start{0.0};
    control.max_all(start);  // every rank starts each phase together
  };
  Event timed_start, timed_stop, other_start, other_stop;
  const int calls = kContentionCalls;

  bracket(compute, timed_start, timed_stop, 3, gemm);  // warm-up: cuBLAS's and NCCL's first calls
  bracket(comm, other_start, other_stop, 3, all_reduce);
  wait();
  ContentionSample sample;
  together();
  bracket(compute, timed_start, timed_stop, calls, gemm);
  wait();
  sample.gemm_alone_s = elapsed_s(timed_start, timed_stop) / calls;
  together();
  bracket(comm, timed_start, timed_stop, calls, all_reduce);
  wait();
  sample.collective_alone_s = elapsed_s(timed_start, timed_stop) / calls;

  // Call counts of the covering side: `margin` times the timed side's span alone, the same
  // on every rank.
  std::vector<double> spans{sample.gemm_alone_s, sample.collective_alone_s};
  control.max_all(spans);
  const auto cover = [&](double margin, double timed_s, double other_s) {
    return static_cast<int>(std::ceil(margin * calls * timed_s / std::max(other_s, 1e-9))) + 1;
  };
  /// Times `calls` of `timed` on `timed_stream` beside `other` on `other_stream`; returns
  /// seconds per call, after as many tries as covering it took.
  const auto beside = [&](cudaStream_t timed_stream, const std::function<void(cudaStream_t)>& timed,
                          cudaStream_t other_stream, const std::function<void(cudaStream_t)>& other, double timed_s,
                          double other_s, bool& covered) {
    double per_call_s = 0.0;
    for (double margin = 2.0; margin <= 32.0; margin *= 4.0) {
      together();
      bracket(other_stream, other_start, other_stop, cover(margin, timed_s, other_s), other);
      bracket(timed_stream, timed_start, timed_stop, calls, timed);
      wait();
      per_call_s = elapsed_s(timed_start, timed_stop) / calls;
      const bool here = elapsed_s(other_start, timed_start) >= 0.0 && elapsed_s(timed_stop, other_stop) >= 0.0;
      std::vector<double> short_anywhere{here ? 0.0 : 1.0};
      control.max_all(short_anywhere);
      covered = short_anywhere[0] == 0.0;
      if (covered) break;
    }
    return per_call_s;
  };
  bool gemm_covered = false, collective_covered = false;
  sample.gemm_beside_s = beside(compute, gemm, comm, all_reduce, spans[0], spans[1], gemm_covered);
  sample.collective_beside_s = beside(comm, all_reduce, compute, gemm, spans[1], spans[0], collective_covered);
  sample.covered = gemm_covered && collective_covered;
  return sample;
}

}  // namespace dtperf::calibrate
