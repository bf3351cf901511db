#include "progress.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <exception>
#include <iostream>

namespace dtperf::cli {

Progress::Progress(std::string command, bool quiet) : command_(std::move(command)), quiet_(quiet) {}

Progress::~Progress() {
  if (!shown_ || std::uncaught_exceptions() > 0) return;  // an error says why it stopped
  std::cerr << fmt::format("dtperf: {}: done in {:.1f} s\n", command_,
                           std::chrono::duration<double>(Clock::now() - start_).count());
}

void Progress::print(const std::string& line) {
  const auto now = Clock::now();
  if (quiet_ || now - start_ < std::chrono::seconds(1) || (shown_ && now - last_ < std::chrono::seconds(1))) return;
  last_ = now;
  shown_ = true;
  std::cerr << fmt::format("dtperf: {}: {} ({:.0f} s)\n", command_, line,
                           std::chrono::duration<double>(now - start_).count());
}

void Progress::stage(std::string_view what) { print(std::string(what)); }

void Progress::count(std::uint64_t done, std::uint64_t total) {
  print(fmt::format("{} of {} points ({:.0f} %)", done, total, total > 0 ? 100.0 * done / total : 100.0));
}

}  // namespace dtperf::cli
