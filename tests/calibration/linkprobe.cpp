// linkprobe: what an emulated link really delivers to TCP, measured the plain way.
//
//   linkprobe serve --port P                  answer probes until killed
//   linkprobe stream --host IP --port P --seconds S
//       one TCP stream for S seconds; prints `stream_gbps=X` (payload bits per second / 1e9,
//       counted by the receiver between its first and last byte, so no latency is included)
//   linkprobe pingpong --host IP --port P --count N
//       N one-byte round trips; prints `one_way_us=X` (median round trip / 2)
//
// Exit code 2 for bad usage, 1 for a network failure.
// It shares no code with dtperf-calibrate's TCP transport on purpose: it is the reference
// the calibration is checked against, so a fault there cannot hide in both.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void usage(const std::string& reason) {
  std::fprintf(stderr,
               "linkprobe: %s\nusage: linkprobe serve --port P | stream --host IP --port P "
               "--seconds S | pingpong --host IP --port P --count N\n",
               reason.c_str());
  std::exit(2);
}

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "linkprobe: %s: %s\n", what.c_str(), std::strerror(errno));
  std::exit(1);
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void set_nodelay(int fd) {
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

void write_all(int fd, const void* data, std::size_t bytes) {
  const auto* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::send(fd, p, bytes, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("send");
    p += n;
    bytes -= static_cast<std::size_t>(n);
  }
}

bool read_all(int fd, void* data, std::size_t bytes) {
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

/// Stream sink: counts bytes until EOF, then answers with the payload rate it saw.
void serve_stream(int fd) {
  std::vector<char> buffer(1 << 20);
  std::uint64_t total_bytes = 0;
  Clock::time_point first{};
  Clock::time_point last{};
  for (;;) {
    const ssize_t n = ::recv(fd, buffer.data(), buffer.size(), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (total_bytes == 0) first = Clock::now();
    last = Clock::now();
    total_bytes += static_cast<std::uint64_t>(n);
  }
  const double seconds = std::chrono::duration<double>(last - first).count();
  const double gbps = seconds > 0 ? 8.0 * static_cast<double>(total_bytes) / seconds / 1e9 : 0.0;
  write_all(fd, &gbps, sizeof gbps);
}

void serve_connection(int fd) {
  char mode = 0;
  if (read_all(fd, &mode, 1)) {
    if (mode == 'S') serve_stream(fd);
    char byte = 0;
    while (mode == 'P' && read_all(fd, &byte, 1)) write_all(fd, &byte, 1);
  }
  ::close(fd);
}

[[noreturn]] void serve(int port) {
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  const int one = 1;
  setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  if (::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) fail("bind");
  if (::listen(listener, 16) != 0) fail("listen");
  for (;;) {
    const int fd = ::accept(listener, nullptr, nullptr);
    if (fd < 0) continue;
    set_nodelay(fd);
    std::thread(serve_connection, fd).detach();
  }
}

int connect_to(const std::string& host, int port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  if (inet_pton(AF_INET, host.c_str(), &address.sin_addr) != 1) usage("not an IPv4 address: " + host);
  for (int attempt = 0; attempt < 100; ++attempt) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0) {
      set_nodelay(fd);
      return fd;
    }
    ::close(fd);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  fail("connect to " + host);
}

void stream(const std::string& host, int port, double seconds) {
  const int fd = connect_to(host, port);
  write_all(fd, "S", 1);
  std::vector<char> buffer(1 << 20, 'x');
  const Clock::time_point start = Clock::now();
  while (seconds_since(start) < seconds) write_all(fd, buffer.data(), buffer.size());
  ::shutdown(fd, SHUT_WR);
  double gbps = 0.0;
  if (!read_all(fd, &gbps, sizeof gbps)) fail("no answer from the stream sink");
  std::printf("stream_gbps=%.4f\n", gbps);
  ::close(fd);
}

void pingpong(const std::string& host, int port, int count) {
  const int fd = connect_to(host, port);
  write_all(fd, "P", 1);
  std::vector<double> round_trips_us;
  char byte = 'p';
  for (int i = 0; i < count; ++i) {
    const Clock::time_point start = Clock::now();
    write_all(fd, &byte, 1);
    if (!read_all(fd, &byte, 1)) fail("echo closed");
    round_trips_us.push_back(seconds_since(start) * 1e6);
  }
  std::sort(round_trips_us.begin(), round_trips_us.end());
  std::printf("one_way_us=%.1f\n", round_trips_us[round_trips_us.size() / 2] / 2.0);
  ::close(fd);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) usage("missing mode");
  const std::string mode = argv[1];
  std::string host;
  int port = -1;
  double seconds = 2.0;
  int count = 50;
  for (int i = 2; i < argc; i += 2) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) usage("missing value after " + flag);
    const std::string value = argv[i + 1];
    if (flag == "--host") host = value;
    else if (flag == "--port") port = std::atoi(value.c_str());
    else if (flag == "--seconds") seconds = std::atof(value.c_str());
    else if (flag == "--count") count = std::atoi(value.c_str());
    else usage("unknown option " + flag);
  }
  if (port <= 0 || port > 65535) usage("--port must be 1..65535");
  if (mode == "serve") serve(port);
  if (host.empty()) usage("--host is required");
  if (mode == "stream" && seconds > 0) stream(host, port, seconds);
  else if (mode == "pingpong" && count > 0) pingpong(host, port, count);
  else usage("unknown mode or bad --seconds/--count: " + mode);
  return 0;
}
