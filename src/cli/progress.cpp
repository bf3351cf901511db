#include "progress.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <exception>
#include <iostream>

namespace dtperf::cli {

Progress::Progress(std::string command, bool quiet) : command_(std::move(command)), quiet_(quiet) {
  if (!quiet_) watcher_ = std::thread([this] { watch(); });
}

Progress::~Progress() {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (watcher_.joinable()) watcher_.join();
  if (!shown_ || std::uncaught_exceptions() > 0) return;  // an error says why it stopped
  std::cerr << fmt::format("dtperf: {}: done in {:.1f} s\n", command_,
                           std::chrono::duration<double>(Clock::now() - start_).count());
}

void Progress::watch() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    wake_.wait_for(lock, std::chrono::seconds(1));
    // A new step at once; the same step again after kRepeat, so a long one shows it runs.
    const bool repeat = shown_ && Clock::now() - last_ >= kRepeat;
    if (!stopping_ && !current_.empty() && (current_ != printed_ || repeat)) print_locked(current_);
  }
}

void Progress::print_locked(const std::string& line) {
  const auto now = Clock::now();
  if (quiet_ || now - start_ < std::chrono::seconds(1) || (shown_ && now - last_ < std::chrono::seconds(1))) return;
  last_ = now;
  shown_ = true;
  printed_ = line;
  std::cerr << fmt::format("dtperf: {}: {} ({:.0f} s)\n", command_, line,
                           std::chrono::duration<double>(now - start_).count());
}

void Progress::stage(std::string_view what) {
  const std::lock_guard lock(mutex_);
  current_ = std::string(what);
  print_locked(current_);
}

void Progress::count(std::uint64_t done, std::uint64_t total) {
  const std::lock_guard lock(mutex_);
  current_ = fmt::format("{} of {} points ({:.0f} %)", done, total, total > 0 ? 100.0 * done / total : 100.0);
  print_locked(current_);
}

}  // namespace dtperf::cli
