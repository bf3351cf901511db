// The host backend's measured operations: all-reduce, sendrecv and the CPU workload.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>

#include "host_backend.hpp"

namespace dtperf::calibrate {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Times `calls` calls of `call` one by one: their mean, and their median in `median_s`.
template <typename Call>
double time_calls_s(int calls, std::vector<double>& per_call_s, double& median_s, Call&& call) {
  if (calls <= 0) return 0.0;
  per_call_s.resize(static_cast<std::size_t>(calls));
  const Clock::time_point start = Clock::now();
  Clock::time_point previous = start;
  for (int c = 0; c < calls; ++c) {
    call();
    const Clock::time_point now = Clock::now();
    per_call_s[static_cast<std::size_t>(c)] = std::chrono::duration<double>(now - previous).count();
    previous = now;
  }
  const double mean_s = seconds_since(start) / calls;
  std::sort(per_call_s.begin(), per_call_s.end());
  const std::size_t mid = per_call_s.size() / 2;
  median_s = per_call_s.size() % 2 == 1 ? per_call_s[mid] : 0.5 * (per_call_s[mid - 1] + per_call_s[mid]);
  return mean_s;
}

std::size_t largest_count(const std::vector<std::uint64_t>& sizes_bytes) {
  const std::uint64_t largest = sizes_bytes.empty() ? 0 : *std::max_element(sizes_bytes.begin(), sizes_bytes.end());
  return static_cast<std::size_t>(largest / sizeof(float));
}

class AllReduceOps : public PointOps {
 public:
  AllReduceOps(TcpMesh& mesh, std::vector<int> members, const std::vector<std::uint64_t>& sizes_bytes)
      : comm_(mesh, std::move(members)), sizes_bytes_(sizes_bytes), send_(largest_count(sizes_bytes)),
        recv_(send_.size()) {
    for (std::size_t i = 0; i < send_.size(); ++i) send_[i] = pattern_value(mesh.rank(), i);
    for (int member : comm_.members()) rank_sum_ += member + 1;
  }

  bool run_checked(std::size_t point) override {
    const std::size_t count = count_of(point);
    std::fill(recv_.begin(), recv_.begin() + static_cast<long>(count), -1.0f);
    comm_.all_reduce_sum(send_.data(), recv_.data(), count);
    for (std::size_t i = 0; i < count; ++i) {
      if (recv_[i] != static_cast<float>(rank_sum_ * static_cast<int>(i % 7 + 1))) return false;
    }
    return true;
  }

  void run(std::size_t point, int calls) override {
    for (int c = 0; c < calls; ++c) comm_.all_reduce_sum(send_.data(), recv_.data(), count_of(point));
  }

  double time_s(std::size_t point, int calls) override {
    return time_calls_s(calls, per_call_s_, median_s_,
                        [&] { comm_.all_reduce_sum(send_.data(), recv_.data(), count_of(point)); });
  }
  double last_median_s() const override { return median_s_; }

 private:
  std::size_t count_of(std::size_t point) const { return static_cast<std::size_t>(sizes_bytes_.at(point) / sizeof(float)); }

  std::vector<double> per_call_s_;
  double median_s_ = -1.0;
  HostComm comm_;
  std::vector<std::uint64_t> sizes_bytes_;
  std::vector<float> send_, recv_;
  int rank_sum_ = 0;
};

class SendRecvOps : public PointOps {
 public:
  SendRecvOps(TcpMesh& mesh, int peer, const std::vector<std::uint64_t>& sizes_bytes)
      : mesh_(mesh), peer_(peer), sizes_bytes_(sizes_bytes), send_(largest_count(sizes_bytes)), recv_(send_.size()) {
    for (std::size_t i = 0; i < send_.size(); ++i) send_[i] = pattern_value(mesh.rank(), i);
  }

  bool run_checked(std::size_t point) override {
    const std::size_t count = static_cast<std::size_t>(sizes_bytes_.at(point) / sizeof(float));
    std::fill(recv_.begin(), recv_.begin() + static_cast<long>(count), -1.0f);
    run(point, 1);
    for (std::size_t i = 0; i < count; ++i) {
      if (recv_[i] != pattern_value(peer_, i)) return false;
    }
    return true;
  }

  void run(std::size_t point, int calls) override {
    const std::size_t bytes = static_cast<std::size_t>(sizes_bytes_.at(point));
    for (int c = 0; c < calls; ++c) exchange(mesh_, peer_, send_.data(), recv_.data(), bytes);
  }

  double time_s(std::size_t point, int calls) override {
    return time_calls_s(calls, per_call_s_, median_s_, [&] { run(point, 1); });
  }
  double last_median_s() const override { return median_s_; }

 private:
  std::vector<double> per_call_s_;
  double median_s_ = -1.0;
  TcpMesh& mesh_;
  int peer_;
  std::vector<std::uint64_t> sizes_bytes_;
  std::vector<float> send_, recv_;
};

}  // namespace

std::unique_ptr<PointOps> make_all_reduce_ops(TcpMesh& mesh, std::vector<int> members,
                                              const std::vector<std::uint64_t>& sizes_bytes) {
  return std::make_unique<AllReduceOps>(mesh, std::move(members), sizes_bytes);
}

std::unique_ptr<PointOps> make_sendrecv_ops(TcpMesh& mesh, int peer, const std::vector<std::uint64_t>& sizes_bytes) {
  return std::make_unique<SendRecvOps>(mesh, peer, sizes_bytes);
}

double cpu_workload_s() {
  // 64 Ki floats (256 KiB, cache-resident) through 256 multiply-add passes: 16 M of them.
  thread_local std::vector<float> data(std::size_t{1} << 16, 1.0f);
  const Clock::time_point start = Clock::now();
  for (int pass = 0; pass < 256; ++pass) {
    for (float& x : data) x = x * 0.999f + 0.001f;
  }
  volatile float sink = data[data.size() / 2];
  (void)sink;
  return seconds_since(start);
}

}  // namespace dtperf::calibrate
