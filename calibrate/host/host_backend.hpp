#pragma once
// The host backend: CPU ranks (one process each) over the TCP mesh. It measures the same
// plan as the GPU backend without GEMM and copy entries: ring all-reduce of float32 with
// real data, sendrecv exchanges between pairs, and the spread of a fixed CPU workload.
// Times come from the monotonic clock around each timed loop.
#include <cstdint>
#include <memory>
#include <vector>

#include "../options.hpp"
#include "../runner.hpp"
#include "../topology.hpp"
#include "host_comm.hpp"

namespace dtperf::calibrate {

/// Control over the world: element-wise max through rank 0.
class HostControl : public Control {
 public:
  explicit HostControl(HostComm& world) : world_(world) {}
  int rank() const override { return world_.index(); }
  int world_size() const override { return world_.size(); }
  void max_all(std::vector<double>& values) override { world_.max_all(values); }

 private:
  HostComm& world_;
};

class HostBackend : public Backend {
 public:
  /// `mesh` must be connected.
  explicit HostBackend(TcpMesh& mesh);
  Control& control() override { return control_; }
  std::unique_ptr<PointOps> ops_for(const PlanEntry& entry) override;
  std::vector<double> spread_samples_s(int warmup, int iterations) override;

 private:
  TcpMesh& mesh_;
  HostComm world_;
  HostControl control_;
};

/// The value rank `rank` puts at element `i` of its send buffer: small integers, so sums
/// over any number of ranks are exact in float32.
inline float pattern_value(int rank, std::size_t i) {
  return static_cast<float>((rank + 1) * static_cast<int>(i % 7 + 1));
}

/// Ops for one all-reduce communicator or one sendrecv pair (exposed for unit tests).
std::unique_ptr<PointOps> make_all_reduce_ops(TcpMesh& mesh, std::vector<int> members,
                                              const std::vector<std::uint64_t>& sizes_bytes);
std::unique_ptr<PointOps> make_sendrecv_ops(TcpMesh& mesh, int peer, const std::vector<std::uint64_t>& sizes_bytes);

/// Seconds of one run of the fixed CPU workload (16 M multiply-adds in cache, ~1-2 ms).
double cpu_workload_s();

/// Runs the host backend for this rank: rendezvous, mesh, plan, raw file (rank 0).
/// Returns the exit code.
int run_host_calibration(const Options& options);

}  // namespace dtperf::calibrate
