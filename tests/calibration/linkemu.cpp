// linkemu: emulates point-to-point links in user space on NFQUEUE queues: each queue is one
// link with a serialization rate, a drop-tail buffer and a constant one-way delay. It stands
// in for netem, which the test machines' kernel lacks, and for tbf, whose token bucket loses
// rate when timers fire late (virtual machines) unless its burst is so large that messages
// below the burst size skip serialization.
//
//   linkemu --queues 0,1 --rate-gbps 1 --delay-us 2000 [--mtu 1500]
//           [--buffer-bytes 1000000] [--ready-file PATH] [--timeline PATH]
//
// Packets reach a queue through a rule such as `iptables -A FORWARD -i veth0 -j NFQUEUE
// --queue-num 0`. A packet of L bytes on the wire that arrives at time a leaves the link's
// transmitter at f = max(a, f_prev) + 8 L / rate and is accepted at f + delay; when the
// backlog (f_prev - a) * rate exceeds the buffer it is dropped. The schedule is computed
// from these virtual times, so a late wake-up delays packets but never loses rate; wake-ups
// are asked for early by the typical timer lateness, and the last stretch is polled.
//
// Wire bytes count the Ethernet header (14 B) but not FCS, preamble or gap, as tc does, so a
// TCP stream with timestamps carries 1448 / 1514 = 95.6 % of the rate as payload. GSO
// packets are queued whole (one message per up to 64 KiB); their wire size counts the
// headers of every MTU-sized segment. Only the first 128 bytes of each packet are copied.
// With --timeline, every packet's time on its link's transmitter is written to PATH at exit,
// one line each: the queue, the transmission's start and end (CLOCK_MONOTONIC ns, the clock
// of every process on the machine, whatever its network namespace) and its wire bytes; the
// validation harness's traces set it beside each iteration's phases (trace_summary.py).
// Runs until SIGTERM or SIGINT; exit code 2 for bad usage, 1 when a queue cannot be opened.
//
// <netinet/in.h> must come before the kernel headers so that libc-compat.h sees it.
#include <netinet/in.h>
//
#include <libnetfilter_queue/libnetfilter_queue.h>
#include <linux/netfilter.h>
#include <poll.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace {

volatile std::sig_atomic_t g_stop = 0;
void on_signal(int) { g_stop = 1; }

constexpr int kEthernetHeaderBytes = 14;
constexpr int kCopyBytes = 128;

struct Held {
  std::uint32_t id;
  std::int64_t release_ns;
};

/// One packet's time on the transmitter, for --timeline.
struct Sent {
  std::int64_t start_ns;
  std::int64_t end_ns;
  double wire_bytes;
};

/// One emulated link: its queue handle, transmitter clock and the packets in flight.
struct Link {
  nfq_q_handle* queue = nullptr;
  double ns_per_byte = 0.0;
  std::int64_t delay_ns = 0;
  double buffer_bytes = 0.0;
  int mtu_bytes = 1500;
  double transmitter_free_ns = 0.0;
  std::deque<Held> in_flight;
  std::uint64_t packets = 0;
  std::uint64_t dropped = 0;
  double wire_bytes = 0.0;
  double release_lateness_ns = 0.0;  // summed over released packets: how late their verdict was
  std::uint64_t released = 0;
  bool keep_timeline = false;
  std::vector<Sent> timeline;
};

std::int64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

/// Bytes this packet occupies on the wire: the IPv4 total length plus an Ethernet header per
/// MTU-sized segment (a GSO packet is split into segments with the same headers).
double wire_bytes_of(const unsigned char* ip, int copied_bytes, int mtu_bytes) {
  if (copied_bytes < 20 || (ip[0] >> 4) != 4) return copied_bytes + kEthernetHeaderBytes;
  int total_bytes = (ip[2] << 8) | ip[3];
  if (total_bytes == 0) total_bytes = 65536;
  int header_bytes = (ip[0] & 0x0f) * 4;
  if (ip[9] == IPPROTO_TCP && copied_bytes >= header_bytes + 13) {
    header_bytes += (ip[header_bytes + 12] >> 4) * 4;
  }
  const int payload_bytes = std::max(0, total_bytes - header_bytes);
  const int segment_payload_bytes = std::max(1, mtu_bytes - header_bytes);
  const int segments = std::max(1, (payload_bytes + segment_payload_bytes - 1) / segment_payload_bytes);
  return payload_bytes + static_cast<double>(segments) * (header_bytes + kEthernetHeaderBytes);
}

int on_packet(nfq_q_handle* queue, nfgenmsg*, nfq_data* data, void* arg) {
  auto* link = static_cast<Link*>(arg);
  const nfqnl_msg_packet_hdr* header = nfq_get_msg_packet_hdr(data);
  if (header == nullptr) return 0;
  const std::uint32_t id = ntohl(header->packet_id);
  unsigned char* payload = nullptr;
  const int copied_bytes = nfq_get_payload(data, &payload);
  const double bytes = wire_bytes_of(payload, copied_bytes, link->mtu_bytes);
  const double arrival_ns = static_cast<double>(now_ns());
  const double backlog_bytes = (link->transmitter_free_ns - arrival_ns) / link->ns_per_byte;
  ++link->packets;
  if (backlog_bytes > link->buffer_bytes) {
    ++link->dropped;
    nfq_set_verdict(queue, id, NF_DROP, 0, nullptr);
    return 0;
  }
  const double start_ns = std::max(arrival_ns, link->transmitter_free_ns);
  link->transmitter_free_ns = start_ns + bytes * link->ns_per_byte;
  link->wire_bytes += bytes;
  if (link->keep_timeline) {
    link->timeline.push_back({static_cast<std::int64_t>(start_ns), static_cast<std::int64_t>(link->transmitter_free_ns),
                              bytes});
  }
  link->in_flight.push_back({id, static_cast<std::int64_t>(link->transmitter_free_ns) + link->delay_ns});
  return 0;
}

[[noreturn]] void usage(const std::string& reason) {
  std::fprintf(stderr,
               "linkemu: %s\nusage: linkemu --queues N[,N...] --rate-gbps R --delay-us D "
               "[--mtu BYTES] [--buffer-bytes BYTES] [--ready-file PATH] [--timeline PATH]\n",
               reason.c_str());
  std::exit(2);
}

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "linkemu: %s: %s\n", what.c_str(), std::strerror(errno));
  std::exit(1);
}

struct Args {
  std::vector<int> queues;
  double rate_gbps = 0.0;
  double delay_us = -1.0;
  int mtu_bytes = 1500;
  double buffer_bytes = 1e6;
  std::string ready_file;
  std::string timeline_file;
};

double number(const std::string& flag, const std::string& text) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0') usage("not a number: " + flag + " " + text);
  return value;
}

Args parse_args(int argc, char** argv) {
  Args args;
  for (int i = 1; i < argc; i += 2) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) usage("missing value after " + flag);
    const std::string value = argv[i + 1];
    if (flag == "--queues") {
      std::stringstream list(value);
      for (std::string item; std::getline(list, item, ',');) {
        args.queues.push_back(static_cast<int>(number(flag, item)));
      }
    } else if (flag == "--rate-gbps") args.rate_gbps = number(flag, value);
    else if (flag == "--delay-us") args.delay_us = number(flag, value);
    else if (flag == "--mtu") args.mtu_bytes = static_cast<int>(number(flag, value));
    else if (flag == "--buffer-bytes") args.buffer_bytes = number(flag, value);
    else if (flag == "--ready-file") args.ready_file = value;
    else if (flag == "--timeline") args.timeline_file = value;
    else usage("unknown option " + flag);
  }
  if (args.queues.empty()) usage("--queues is required");
  for (int q : args.queues) {
    if (q < 0 || q > 65535) usage("queue numbers must be 0..65535");
  }
  if (!(args.rate_gbps > 0.0 && args.rate_gbps <= 1000.0)) usage("--rate-gbps must be in (0, 1000]");
  if (!(args.delay_us >= 0.0 && args.delay_us <= 1e7)) usage("--delay-us must be 0..10000000");
  if (args.mtu_bytes < 576 || args.mtu_bytes > 65536) usage("--mtu must be 576..65536");
  if (!(args.buffer_bytes >= 1500.0)) usage("--buffer-bytes must be at least 1500");
  return args;
}

/// Lower timer slack and, if permitted, a real-time priority: both cut the jitter of the
/// release times on a loaded machine. Failing either is not an error.
void tune_scheduling() {
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
  sched_param param{};
  param.sched_priority = 10;
  if (sched_setscheduler(0, SCHED_FIFO, &param) != 0) {
    std::fprintf(stderr, "linkemu: note: running without SCHED_FIFO (%s)\n", std::strerror(errno));
  }
}

void open_link(nfq_handle* handle, int queue_number, Link& link) {
  link.queue = nfq_create_queue(handle, static_cast<std::uint16_t>(queue_number), &on_packet, &link);
  if (link.queue == nullptr) {
    fail("cannot bind NFQUEUE " + std::to_string(queue_number) + " (is another program bound to it?)");
  }
  if (nfq_set_mode(link.queue, NFQNL_COPY_PACKET, kCopyBytes) < 0) fail("cannot set the copy mode");
  if (nfq_set_queue_maxlen(link.queue, 65536) < 0) fail("cannot set the queue length");
  if (nfq_set_queue_flags(link.queue, NFQA_CFG_F_GSO, NFQA_CFG_F_GSO) < 0) {
    std::fprintf(stderr, "linkemu: note: GSO packets are segmented by the kernel\n");
  }
}

/// Accepts the packets of one link whose time has come (one batch verdict covers every older
/// id); returns the time of its next release, or INT64_MAX when nothing is in flight.
std::int64_t release_due(Link& link, std::int64_t now) {
  std::uint32_t last_id = 0;
  bool any = false;
  while (!link.in_flight.empty() && link.in_flight.front().release_ns <= now) {
    last_id = link.in_flight.front().id;
    if (now != INT64_MAX) link.release_lateness_ns += static_cast<double>(now - link.in_flight.front().release_ns);
    ++link.released;
    any = true;
    link.in_flight.pop_front();
  }
  if (any && nfq_set_verdict_batch(link.queue, last_id, NF_ACCEPT) < 0) {
    std::fprintf(stderr, "linkemu: verdict for packet %u failed\n", last_id);
  }
  return link.in_flight.empty() ? INT64_MAX : link.in_flight.front().release_ns;
}

/// Every link's transmissions, queue by queue (--timeline).
void write_timeline(const std::string& path, const std::vector<int>& queues,
                    const std::vector<std::unique_ptr<Link>>& links) {
  std::FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr) {
    std::fprintf(stderr, "linkemu: cannot write %s: %s\n", path.c_str(), std::strerror(errno));
    return;
  }
  std::fputs("# queue transmit_start_ns transmit_end_ns wire_bytes\n", file);
  for (std::size_t i = 0; i < links.size(); ++i) {
    for (const Sent& sent : links[i]->timeline) {
      std::fprintf(file, "%d %lld %lld %.0f\n", queues[i], static_cast<long long>(sent.start_ns),
                   static_cast<long long>(sent.end_ns), sent.wire_bytes);
    }
  }
  std::fclose(file);
}

void write_ready_file(const std::string& path) {
  if (path.empty()) return;
  std::FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr) fail("cannot write " + path);
  std::fputs("ready\n", file);
  std::fclose(file);
}

void drain_socket(nfq_handle* handle, int fd) {
  static char buffer[1 << 17];
  for (;;) {
    const ssize_t got = recv(fd, buffer, sizeof buffer, MSG_DONTWAIT);
    if (got < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return;
      if (errno == ENOBUFS) continue;
      fail("recv from the netfilter queue");
    }
    nfq_handle_packet(handle, buffer, static_cast<int>(got));
  }
}

/// Timer wake-ups come late (tens of microseconds on a loaded virtual machine). The loop
/// learns the typical lateness (moving average of timed-out waits) and asks to wake that
/// much before the next release, then polls without sleeping until the release is due.
class WakeTimer {
 public:
  /// How long to sleep before `due_ns` (0: poll without sleeping), or -1 for no deadline.
  std::int64_t sleep_ns(std::int64_t due_ns, std::int64_t now) {
    if (due_ns == INT64_MAX) return requested_ = -1;
    requested_ = std::max<std::int64_t>(0, due_ns - now - lateness_ns_);
    wake_target_ = now + requested_;
    return requested_;
  }
  /// Records the lateness of a wait that ended by timing out at `now`.
  void timed_out(std::int64_t now) {
    if (requested_ <= 0) return;
    const std::int64_t late = std::clamp<std::int64_t>(now - wake_target_, 0, 500000);
    lateness_ns_ += (late - lateness_ns_) / 16;
  }

 private:
  std::int64_t lateness_ns_ = 50000;
  std::int64_t requested_ = -1;
  std::int64_t wake_target_ = 0;
};

/// SIGTERM and SIGINT are blocked everywhere but inside ppoll(), which unblocks them
/// atomically with `wait_mask`: a signal that came between the check of g_stop and the wait
/// would otherwise be handled before the wait began, and with nothing in flight (no
/// deadline) the wait would never end.
void run(nfq_handle* handle, std::vector<std::unique_ptr<Link>>& links, const sigset_t& wait_mask) {
  const int fd = nfq_fd(handle);
  WakeTimer timer;
  while (g_stop == 0) {
    const std::int64_t now = now_ns();
    std::int64_t next_ns = INT64_MAX;
    for (auto& link : links) next_ns = std::min(next_ns, release_due(*link, now));
    const std::int64_t wait_ns = timer.sleep_ns(next_ns, now);
    pollfd pfd{fd, POLLIN, 0};
    timespec timeout{};
    timeout.tv_sec = wait_ns / 1000000000;
    timeout.tv_nsec = wait_ns % 1000000000;
    const int ready = ppoll(&pfd, 1, wait_ns < 0 ? nullptr : &timeout, &wait_mask);
    if (ready < 0 && errno != EINTR) fail("poll");
    if (ready > 0) drain_socket(handle, fd);
    if (ready == 0) timer.timed_out(now_ns());
  }
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse_args(argc, argv);
  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);
  sigset_t stop_signals;
  sigset_t wait_mask;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  sigprocmask(SIG_BLOCK, &stop_signals, &wait_mask);
  sigdelset(&wait_mask, SIGTERM);
  sigdelset(&wait_mask, SIGINT);
  nfq_handle* handle = nfq_open();
  if (handle == nullptr) fail("cannot open the netfilter queue netlink socket");
  const int buffer_bytes = 16 << 20;
  setsockopt(nfq_fd(handle), SOL_SOCKET, SO_RCVBUFFORCE, &buffer_bytes, sizeof buffer_bytes);
  const int one = 1;
  setsockopt(nfq_fd(handle), SOL_NETLINK, NETLINK_NO_ENOBUFS, &one, sizeof one);

  std::vector<std::unique_ptr<Link>> links;
  for (int queue_number : args.queues) {
    auto link = std::make_unique<Link>();
    link->ns_per_byte = 8.0 / args.rate_gbps;
    link->delay_ns = static_cast<std::int64_t>(args.delay_us * 1e3);
    link->buffer_bytes = args.buffer_bytes;
    link->mtu_bytes = args.mtu_bytes;
    link->keep_timeline = !args.timeline_file.empty();
    open_link(handle, queue_number, *link);
    links.push_back(std::move(link));
  }
  tune_scheduling();
  write_ready_file(args.ready_file);
  run(handle, links, wait_mask);

  // Release what is still held so that no flow stalls while the rules are removed.
  for (std::size_t i = 0; i < links.size(); ++i) {
    Link& link = *links[i];
    release_due(link, INT64_MAX);
    std::fprintf(stderr, "linkemu: queue %d: %llu packets, %llu dropped, %.1f MB on the wire, released %.1f us late on average\n",
                 args.queues[i], static_cast<unsigned long long>(link.packets),
                 static_cast<unsigned long long>(link.dropped), link.wire_bytes / 1e6,
                 link.released > 0 ? link.release_lateness_ns / static_cast<double>(link.released) / 1e3 : 0.0);
    nfq_destroy_queue(link.queue);
  }
  nfq_close(handle);
  if (!args.timeline_file.empty()) write_timeline(args.timeline_file, args.queues, links);
  return 0;
}
