#pragma once
// A full mesh of TCP connections between the ranks of a host-backend world: one
// connection per pair (rank j connects to every rank i < j and introduces itself), with
// Nagle's algorithm off. Every operation between two ranks goes over their one connection in
// program order, so all ranks must issue matching operations in the same order (they walk
// the same plan). Sockets are non-blocking; `transfer` moves any mix of sends and receives
// at once with poll(), so a rank can send to its right neighbour while it receives from its
// left one, or exchange with a peer in both directions, without deadlock.
#include <cstddef>
#include <functional>
#include <span>
#include <vector>

#include "rendezvous.hpp"

namespace dtperf::calibrate {

class TcpMesh {
 public:
  struct Send {
    int peer = 0;
    const void* data = nullptr;
    std::size_t bytes = 0;
  };
  struct Recv {
    int peer = 0;
    void* data = nullptr;
    std::size_t bytes = 0;
    /// Called after bytes [from, to) of this receive have arrived (may be empty).
    std::function<void(std::size_t from, std::size_t to)> on_data;
  };

  /// `io_timeout_s`: how long a transfer may go without any progress before it fails.
  TcpMesh(int rank, int world_size, double io_timeout_s);
  ~TcpMesh();
  TcpMesh(const TcpMesh&) = delete;
  TcpMesh& operator=(const TcpMesh&) = delete;

  /// Listens on all IPv4 addresses at `port` (0: any free port); returns the port.
  int listen(int port);
  /// Connects to every other rank; `endpoints` from the rendezvous (index = rank).
  void connect_all(const std::vector<Endpoint>& endpoints, double timeout_s);

  int rank() const { return rank_; }
  int world_size() const { return world_size_; }

  /// Completes all `sends` and `receives`; throws CalibrationError when a peer closes its
  /// connection or nothing moves for io_timeout_s. A peer must not be this rank.
  void transfer(std::span<const Send> sends, std::span<const Recv> receives);

  void send(int peer, const void* data, std::size_t bytes);
  void recv(int peer, void* data, std::size_t bytes);

 private:
  int accept_one(double timeout_s);
  int fd_of(int peer) const;

  int rank_;
  int world_size_;
  double io_timeout_s_;
  int listener_ = -1;
  std::vector<int> fds_;  // index = peer rank, -1 for this rank
};

}  // namespace dtperf::calibrate
