#pragma once
// Output files are written to `PATH.tmp.PID` and renamed into place, so that a reader
// never sees half a file. While a TemporaryFileGuard is alive, a signal whose default
// ends the process (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGALRM, SIGUSR1, SIGUSR2,
// SIGXCPU, SIGVTALRM, SIGPROF) first removes that temporary file, then ends the process
// as the signal would have (SIGQUIT and SIGXCPU with their core dumps): Ctrl-C, a CPU
// limit or a closed pipe during a write leaves neither a partial output nor a `.tmp.PID`
// behind. SIGXFSZ (a file size limit, `ulimit -f`) is ignored meanwhile, so that the
// write fails with EFBIG and the writer reports it and removes its file, instead of the
// process dying without a word. Header-only, so that dtperf and dtperf-calibrate share it.
// One guard at a time per process (the programs write one file at a time).
#include <signal.h>
#include <unistd.h>

#include <array>
#include <cstring>
#include <string>

namespace dtperf::io {

class TemporaryFileGuard {
 public:
  explicit TemporaryFileGuard(const std::string& path) {
    if (path.size() >= state().path.size()) return;  // too long to keep: no cleanup, as before
    std::memcpy(state().path.data(), path.c_str(), path.size() + 1);
    state().armed = 1;
    struct sigaction action {};
    action.sa_handler = &TemporaryFileGuard::on_signal;
    sigemptyset(&action.sa_mask);
    for (std::size_t i = 0; i < kSignals.size(); ++i) sigaction(kSignals[i], &action, &saved_[i]);
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGXFSZ, &ignore, &saved_file_size_);
  }
  ~TemporaryFileGuard() {
    if (state().armed == 0) return;
    state().armed = 0;
    for (std::size_t i = 0; i < kSignals.size(); ++i) sigaction(kSignals[i], &saved_[i], nullptr);
    sigaction(SIGXFSZ, &saved_file_size_, nullptr);
  }
  TemporaryFileGuard(const TemporaryFileGuard&) = delete;
  TemporaryFileGuard& operator=(const TemporaryFileGuard&) = delete;

 private:
  static constexpr std::array<int, 11> kSignals{SIGINT,  SIGTERM, SIGHUP,  SIGQUIT, SIGPIPE,  SIGALRM,
                                                 SIGUSR1, SIGUSR2, SIGXCPU, SIGVTALRM, SIGPROF};
  struct State {
    std::array<char, 4096> path{};
    volatile sig_atomic_t armed = 0;
  };
  static State& state() {
    static State s;
    return s;
  }
  // Async-signal-safe only: unlink, signal, raise.
  static void on_signal(int signal_number) {
    if (state().armed != 0) ::unlink(state().path.data());
    ::signal(signal_number, SIG_DFL);
    ::raise(signal_number);
  }

  std::array<struct sigaction, kSignals.size()> saved_{};
  struct sigaction saved_file_size_ {};
};

}  // namespace dtperf::io
