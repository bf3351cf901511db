#include "tcp_mesh.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>

#include "../error.hpp"

namespace dtperf::calibrate {

namespace {

constexpr std::uint32_t kHelloMagic = 0x44545043;  // "DTPC"

struct Hello {
  std::uint32_t magic = kHelloMagic;
  std::int32_t rank = 0;
  std::int32_t world_size = 0;
};

std::string errno_text() { return std::strerror(errno); }

std::string peer_name(int peer) { return "rank " + std::to_string(peer); }

void set_socket_options(int fd) {
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

void set_nonblocking(int fd) {
  const int flags = fcntl(fd, F_GETFL, 0);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) {
    throw CalibrationError("cannot make a socket non-blocking: " + errno_text());
  }
}

/// Blocking helpers for the handshake, before sockets turn non-blocking.
void write_blocking(int fd, const void* data, std::size_t bytes) {
  const auto* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::send(fd, p, bytes, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw CalibrationError("handshake send failed: " + errno_text());
    p += n;
    bytes -= static_cast<std::size_t>(n);
  }
}

bool read_blocking(int fd, void* data, std::size_t bytes) {
  auto* p = static_cast<char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::recv(fd, p, bytes, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    bytes -= static_cast<std::size_t>(n);
  }
  return true;
}

int connect_with_retry(const Endpoint& endpoint, double timeout_s) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(endpoint.port));
  if (inet_pton(AF_INET, endpoint.address.c_str(), &address.sin_addr) != 1) {
    throw CalibrationError(peer_name(endpoint.rank) + " published an address that is not IPv4: " + endpoint.address);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) throw CalibrationError("cannot open a socket: " + errno_text());
    if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0) return fd;
    const std::string reason = errno_text();
    ::close(fd);
    if (std::chrono::steady_clock::now() > deadline) {
      throw CalibrationError("cannot connect to " + peer_name(endpoint.rank) + " at " + endpoint.address + ":" +
                             std::to_string(endpoint.port) + ": " + reason +
                             " (a stale rendezvous file? use an empty folder per run)");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace

TcpMesh::TcpMesh(int rank, int world_size, double io_timeout_s)
    : rank_(rank), world_size_(world_size), io_timeout_s_(io_timeout_s),
      fds_(static_cast<std::size_t>(world_size), -1) {}

TcpMesh::~TcpMesh() {
  for (int fd : fds_) {
    if (fd >= 0) ::close(fd);
  }
  if (listener_ >= 0) ::close(listener_);
}

int TcpMesh::listen(int port) {
  listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
  if (listener_ < 0) throw CalibrationError("cannot open a socket: " + errno_text());
  const int one = 1;
  setsockopt(listener_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  if (::bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    throw CalibrationError("cannot listen on port " + std::to_string(port) + ": " + errno_text());
  }
  if (::listen(listener_, std::max(world_size_, 16)) != 0) {
    throw CalibrationError("cannot listen: " + errno_text());
  }
  socklen_t length = sizeof address;
  getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length);
  return ntohs(address.sin_port);
}

int TcpMesh::accept_one(double timeout_s) {
  pollfd pfd{listener_, POLLIN, 0};
  const int ready = ::poll(&pfd, 1, static_cast<int>(timeout_s * 1000));
  if (ready <= 0) {
    throw CalibrationError("rank " + std::to_string(rank_) + ": not every higher rank connected within " +
                           std::to_string(static_cast<int>(timeout_s)) + " s");
  }
  const int fd = ::accept(listener_, nullptr, nullptr);
  if (fd < 0) throw CalibrationError("accept failed: " + errno_text());
  return fd;
}

void TcpMesh::connect_all(const std::vector<Endpoint>& endpoints, double timeout_s) {
  const Hello mine{kHelloMagic, rank_, world_size_};
  for (int peer = 0; peer < rank_; ++peer) {
    const int fd = connect_with_retry(endpoints.at(static_cast<std::size_t>(peer)), timeout_s);
    set_socket_options(fd);
    write_blocking(fd, &mine, sizeof mine);
    fds_[static_cast<std::size_t>(peer)] = fd;
  }
  for (int accepted = 0; accepted < world_size_ - 1 - rank_; ++accepted) {
    const int fd = accept_one(timeout_s);
    Hello hello{};
    if (!read_blocking(fd, &hello, sizeof hello) || hello.magic != kHelloMagic ||
        hello.world_size != world_size_ || hello.rank <= rank_ || hello.rank >= world_size_ ||
        fds_[static_cast<std::size_t>(hello.rank)] >= 0) {
      ::close(fd);
      throw CalibrationError("rank " + std::to_string(rank_) +
                             ": a connection did not introduce itself as a higher rank of this world");
    }
    set_socket_options(fd);
    fds_[static_cast<std::size_t>(hello.rank)] = fd;
  }
  for (int fd : fds_) {
    if (fd >= 0) set_nonblocking(fd);
  }
}

int TcpMesh::fd_of(int peer) const {
  if (peer < 0 || peer >= world_size_ || peer == rank_) {
    throw CalibrationError("internal: no connection from rank " + std::to_string(rank_) + " to " + std::to_string(peer));
  }
  return fds_[static_cast<std::size_t>(peer)];
}

}  // namespace dtperf::calibrate
