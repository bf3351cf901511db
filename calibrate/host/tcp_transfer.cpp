// TcpMesh::transfer: moves a set of sends and receives at once with poll().
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>

#include "../error.hpp"
#include "tcp_mesh.hpp"

namespace dtperf::calibrate {

namespace {

constexpr std::size_t kMaxChunkBytes = std::size_t{4} << 20;

bool would_block() { return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR; }

}  // namespace

void TcpMesh::transfer(std::span<const Send> sends, std::span<const Recv> receives) {
  std::vector<std::size_t> sent(sends.size(), 0), received(receives.size(), 0);
  std::vector<pollfd> polled;
  std::vector<long> owner;  // index into sends (>= 0) or -(index into receives) - 1
  auto last_progress = std::chrono::steady_clock::now();
  for (;;) {
    polled.clear();
    owner.clear();
    for (std::size_t i = 0; i < sends.size(); ++i) {
      if (sent[i] >= sends[i].bytes) continue;
      polled.push_back({fd_of(sends[i].peer), POLLOUT, 0});
      owner.push_back(static_cast<long>(i));
    }
    for (std::size_t i = 0; i < receives.size(); ++i) {
      if (received[i] >= receives[i].bytes) continue;
      polled.push_back({fd_of(receives[i].peer), POLLIN, 0});
      owner.push_back(-static_cast<long>(i) - 1);
    }
    if (polled.empty()) return;
    const int ready = ::poll(polled.data(), polled.size(), 1000);
    if (ready < 0 && errno != EINTR) throw CalibrationError(std::string("poll failed: ") + std::strerror(errno));
    if (ready <= 0) {
      const double idle_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - last_progress).count();
      if (idle_s > io_timeout_s_) {
        throw CalibrationError("rank " + std::to_string(rank_) + ": no data moved for " +
                               std::to_string(static_cast<int>(idle_s)) + " s (a peer stopped?)");
      }
      continue;
    }
    for (std::size_t k = 0; k < polled.size(); ++k) {
      if (polled[k].revents == 0) continue;
      if (owner[k] >= 0) {
        const Send& op = sends[static_cast<std::size_t>(owner[k])];
        std::size_t& done = sent[static_cast<std::size_t>(owner[k])];
        const std::size_t chunk = std::min(op.bytes - done, kMaxChunkBytes);
        const ssize_t n = ::send(polled[k].fd, static_cast<const char*>(op.data) + done, chunk,
                                 MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0 && !would_block()) {
          throw CalibrationError("sending to rank " + std::to_string(op.peer) + " failed: " + std::strerror(errno));
        }
        if (n > 0) done += static_cast<std::size_t>(n);
      } else {
        const Recv& op = receives[static_cast<std::size_t>(-owner[k] - 1)];
        std::size_t& done = received[static_cast<std::size_t>(-owner[k] - 1)];
        const ssize_t n = ::recv(polled[k].fd, static_cast<char*>(op.data) + done,
                                 std::min(op.bytes - done, kMaxChunkBytes), MSG_DONTWAIT);
        if (n == 0) {
          throw CalibrationError("rank " + std::to_string(op.peer) + " closed its connection to rank " +
                                 std::to_string(rank_) + " (did it fail? see its messages)");
        }
        if (n < 0 && !would_block()) {
          throw CalibrationError("receiving from rank " + std::to_string(op.peer) + " failed: " + std::strerror(errno));
        }
        if (n > 0) {
          const std::size_t from = done;
          done += static_cast<std::size_t>(n);
          if (op.on_data) op.on_data(from, done);
        }
      }
      last_progress = std::chrono::steady_clock::now();
    }
  }
}

void TcpMesh::send(int peer, const void* data, std::size_t bytes) {
  const Send op{peer, data, bytes};
  transfer(std::span<const Send>(&op, 1), {});
}

void TcpMesh::recv(int peer, void* data, std::size_t bytes) {
  const Recv op{peer, data, bytes, {}};
  transfer({}, std::span<const Recv>(&op, 1));
}

}  // namespace dtperf::calibrate
