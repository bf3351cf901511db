// An interrupt while an output file is being written leaves no `.tmp.PID` behind.
#include <catch2/catch.hpp>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "dtperf/io/temporary_file_guard.hpp"

namespace {

// Forks a child that writes `path` under a guard (or not) and sends itself `signal_number`;
// returns the signal that ended the child.
int interrupted_child(const std::string& path, bool guarded, int signal_number = SIGINT) {
  const pid_t child = ::fork();
  if (child == 0) {
    ::signal(signal_number, SIG_DFL);  // the test framework's own handler would report the signal
    const struct rlimit no_core {0, 0};
    ::setrlimit(RLIMIT_CORE, &no_core);  // SIGQUIT's core dump: none in the test's folder
    if (guarded) {
      const dtperf::io::TemporaryFileGuard guard(path);
      std::ofstream(path) << "half a file";
      ::raise(signal_number);
    } else {
      std::ofstream(path) << "half a file";
      ::raise(signal_number);
    }
    ::_exit(0);  // not reached: the signal ends the child
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  return WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}

}  // namespace

TEST_CASE("an interrupt during a guarded write removes the temporary file", "[io]") {
  const std::string dir = std::filesystem::temp_directory_path() / ("dtperf-guard-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/out.json.tmp.1";
  // Without the guard the interrupted write leaves the file: the test can tell.
  CHECK(interrupted_child(path, false) == SIGINT);
  CHECK(std::filesystem::exists(path));
  std::filesystem::remove(path);
  // With it, the process still ends by SIGINT, and the file is gone.
  CHECK(interrupted_child(path, true) == SIGINT);
  CHECK_FALSE(std::filesystem::exists(path));
  // The same for every signal that ends a process by default from a terminal or a job
  // scheduler: SIGTERM (kill, Slurm's time limit), SIGHUP (a closed terminal), SIGQUIT
  // (Ctrl-\, which also dumps core), and every other whose default ends the process: a
  // closed pipe, an alarm, the user signals, CPU limits, profiling timers.
  for (int signal_number :
       {SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGALRM, SIGUSR1, SIGUSR2, SIGXCPU, SIGVTALRM, SIGPROF}) {
    CHECK(interrupted_child(path, true, signal_number) == signal_number);
    CHECK_FALSE(std::filesystem::exists(path));
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("a guard that ends restores the previous signal handling", "[io]") {
  for (int signal_number : {SIGINT, SIGXFSZ}) {
    struct sigaction before {};
    sigaction(signal_number, nullptr, &before);
    {
      const dtperf::io::TemporaryFileGuard guard("/nonexistent/x.tmp");
      struct sigaction during {};
      sigaction(signal_number, nullptr, &during);
      CHECK(during.sa_handler != before.sa_handler);  // SIGXFSZ ignored: the write fails, reported
    }
    struct sigaction after {};
    sigaction(signal_number, nullptr, &after);
    CHECK(after.sa_handler == before.sa_handler);
  }
}
