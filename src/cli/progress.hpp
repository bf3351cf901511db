#pragma once
// Progress on stderr for commands that may run long: nothing during the first second (a
// quick command prints nothing), then at most one line a second naming what is being
// done, and a last line with the total time if any was printed. stdout is never touched.
// A watcher thread wakes every second, so a step that started in the first second (or
// right after another line) and runs long is still named while it runs, and named again
// every 3 seconds while it lasts (advise's schemes on 131,072 GPUs: one step of 6 s).
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

namespace dtperf::cli {

class Progress {
 public:
  Progress(std::string command, bool quiet);
  ~Progress();  // the total time, when progress was shown
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  /// A step of the work starts ("the break-even NIC rate").
  void stage(std::string_view what);
  /// Points done of a total.
  void count(std::uint64_t done, std::uint64_t total);

 private:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::seconds kRepeat{3};
  void print_locked(const std::string& line);  // with mutex_ held; at most one line a second
  void watch();

  std::string command_;
  bool quiet_;
  Clock::time_point start_ = Clock::now();
  Clock::time_point last_ = start_;
  bool shown_ = false;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::string current_;  // the step now running
  std::string printed_;  // the last line printed
  bool stopping_ = false;
  std::thread watcher_;  // started last, after every member it reads
};

}  // namespace dtperf::cli
