#pragma once
// Collectives among a subset of the ranks of a TcpMesh, with real data.
//   all_reduce_sum: ring all-reduce of float32 (reduce-scatter, then all-gather: 2(n-1)
//     steps, each sending one n-th of the data to the right neighbour while receiving one
//     from the left, reducing as the bytes arrive), out of place. A step whose segment is
//     empty (fewer elements than ranks) still sends one byte, so every step costs a
//     message, as it does in NCCL.
//   max_all: element-wise maximum of a few doubles, gathered and sent back by the first
//     member (for control decisions, not measured).
//   exchange: two ranks send each other the same number of bytes at once.
#include <cstddef>
#include <vector>

#include "tcp_mesh.hpp"

namespace dtperf::calibrate {

class HostComm {
 public:
  /// `members`: global ranks in ring order; must contain mesh.rank().
  HostComm(TcpMesh& mesh, std::vector<int> members);

  int size() const { return static_cast<int>(members_.size()); }
  /// This rank's position in the member list.
  int index() const { return index_; }
  const std::vector<int>& members() const { return members_; }

  /// recv[i] = sum over members of their send[i]; `send` and `recv` must not overlap.
  void all_reduce_sum(const float* send, float* recv, std::size_t count);
  /// values[i] = max over members of their values[i]; every member passes the same size.
  void max_all(std::vector<double>& values);

 private:
  /// Element range [begin, end) of segment `segment` (taken modulo the size).
  std::size_t segment_begin(std::size_t count, int segment) const;
  void ring_step(const float* send_from, float* recv_into, std::size_t send_elements, std::size_t recv_elements,
                 const float* reduce_with);

  TcpMesh& mesh_;
  std::vector<int> members_;
  int index_ = -1;
  std::vector<float> incoming_;
};

/// Sends `bytes` from `send` to `peer` while receiving `bytes` from it into `recv`.
void exchange(TcpMesh& mesh, int peer, const void* send, void* recv, std::size_t bytes);

}  // namespace dtperf::calibrate
