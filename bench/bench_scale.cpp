// dtperf_bench scale: the scale goals, each case in a fresh process whose wall time and
// peak resident memory (wait4's rusage of that process alone) are printed against the
// goal. Command-line cases run the dtperf binary itself, as a user would; the spectral gap
// runs in this program (`dtperf_bench gap TOPOLOGY RANKS PER_NODE`), which reports the
// time of the gap alone beside its process's memory.
#include "bench_scale.hpp"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dtperf/mixing.hpp"
#include "dtperf/topology.hpp"

extern char** environ;

namespace dtperf::bench {

namespace {

using Clock = std::chrono::steady_clock;

struct Fresh {
  double seconds = 0.0;
  double peak_mib = 0.0;
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

// Runs argv in a new process (output to a temporary file), timing it and reading its
// own peak RSS.
Fresh run_fresh(const std::vector<std::string>& argv) {
  char path[] = "/tmp/dtperf-bench-XXXXXX";
  const int fd = mkstemp(path);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fd, 1);
  posix_spawn_file_actions_adddup2(&actions, fd, 2);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  Fresh f;
  const auto start = Clock::now();
  pid_t pid = 0;
  if (posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ) == 0) {
    int status = 0;
    rusage usage{};
    wait4(pid, &status, 0, &usage);
    f.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    f.peak_mib = static_cast<double>(usage.ru_maxrss) / 1024.0;  // Linux reports KiB
    f.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  posix_spawn_file_actions_destroy(&actions);
  close(fd);
  std::ifstream in(path);
  f.output.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  std::remove(path);
  return f;
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

// "goal < 10 ms: met" (or NOT MET).
std::string fmt_goal(bool met, double goal, const char* unit) {
  char text[96];
  std::snprintf(text, sizeof text, "goal < %g %s: %s", goal, unit, met ? "met" : "NOT MET");
  return text;
}

// dtperf with `args`, in a fresh process.
Fresh run_dtperf(const std::string& dtperf, const std::vector<std::string>& args) {
  std::vector<std::string> argv{dtperf};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_fresh(argv);
}

// One command-line case against a time goal (and a memory goal, when given).
void cli_case(const std::string& dtperf, const std::string& what, const std::vector<std::string>& args,
              double goal_s, double goal_mib = 0.0) {
  const Fresh f = run_dtperf(dtperf, args);
  if (f.exit_code != 0) {
    std::printf("  %-58s refused: %s\n", what.c_str(), first_line(f.output).c_str());
    return;
  }
  std::string goal = goal_s > 0.0 ? fmt_goal(f.seconds < goal_s, goal_s, "s") : "";
  if (goal_mib > 0.0) goal += ", " + fmt_goal(f.peak_mib < goal_mib, goal_mib, "MiB");
  std::printf("  %-58s %8.3f s %8.1f MiB  %s\n", what.c_str(), f.seconds, f.peak_mib, goal.c_str());
}

// A runs file of `count` runs of ResNet-50 with times drawn from 150-400 ms by a fixed
// generator (which no model explains: the fit's search runs long). `schemes` cycle over
// the runs, nodes (2-32) and batch (16-64) are drawn; All-Reduce alone also draws a NIC
// rate (5-100 Gbit/s), which makes every run its own configuration.
std::string write_runs(const std::vector<std::string>& schemes, int count) {
  char path[] = "/tmp/dtperf-bench-runs-XXXXXX";
  const int fd = mkstemp(path);
  close(fd);
  std::uint64_t state = 0x9e3779b97f4a7c15ULL;
  const auto draw = [&state](std::uint64_t below) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (state >> 33) % below;
  };
  std::ofstream out(path);
  out << "{\"schema\": \"dtperf.runs/1\", \"runs\": [\n";
  const int nodes[] = {2, 4, 8, 16, 32};
  const int batches[] = {16, 32, 64};
  for (int i = 0; i < count; ++i) {
    const std::string& scheme = schemes[static_cast<std::size_t>(i) % schemes.size()];
    const int n = nodes[draw(5)];
    const int batch = batches[draw(3)];
    out << (i > 0 ? ",\n" : "") << "{\"label\": \"r" << i << "\", \"scheme\": \"" << scheme << "\", \"nodes\": " << n
        << ", \"batch_per_gpu\": " << batch;
    // A NIC rate of its own (5-100 Gbit/s) makes each run of one scheme its own configuration.
    if (schemes.size() == 1) out << ", \"nic_gbps\": " << 5.0 + 0.001 * static_cast<double>(draw(95000));
    out << ", \"iteration_ms\": " << 150.0 + 0.1 * static_cast<double>(draw(2500)) << "}";
  }
  out << "\n]}\n";
  return path;
}

}  // namespace

int gap_case(const std::string& topology, int ranks, int per_node) {
  const auto start = Clock::now();
  const Topology t = make_topology(topology, ranks, per_node);
  const auto built = Clock::now();
  const MixingQuality q = mixing_quality(t);
  const auto done = Clock::now();
  std::printf("%.6f %.6f %.6g\n", std::chrono::duration<double>(done - built).count(),
              std::chrono::duration<double>(built - start).count(), q.spectral_gap);
  return 0;
}

void bench_scale(const std::string& self, const std::string& dtperf) {
  constexpr int kRanks = 131072;  // 16,384 nodes of 8
  std::printf("scale: every case in a fresh process; wall time and that process's peak RSS\n");
  std::printf("spectral gap at 131,072 GPUs (16,384 x 8), with the period's exact-average check and degree; the\n"
              "schedule it is read from built first (its time shown, no goal); peak RSS of the process doing both\n");
  for (const TopologyInfo& t : topologies()) {
    const Fresh f = run_fresh({self, "gap", t.name, std::to_string(kRanks), "8"});
    double seconds = 0.0;
    double build_s = 0.0;
    double gap = 0.0;
    std::istringstream(f.output) >> seconds >> build_s >> gap;
    std::printf("  %-22s gap %-9.4g %7.2f ms (schedule %6.1f ms) %6.1f MiB  %s, %s\n", t.name, gap, 1e3 * seconds,
                1e3 * build_s, f.peak_mib, fmt_goal(seconds < 0.010, 10, "ms").c_str(),
                fmt_goal(f.peak_mib < 50.0, 50, "MiB").c_str());
  }
  const std::vector<std::string> huge{"--profile", "dgx-h100", "--model", "llama-7b", "--nodes", "16384",
                                      "--gpus-per-node", "8"};
  std::printf("dtperf at 131,072 GPUs (llama-7b on 16,384 x dgx-h100):\n");
  for (const TopologyInfo& t : topologies()) {
    std::vector<std::string> args{"predict", "--scheme", t.name};
    args.insert(args.end(), huge.begin(), huge.end());
    cli_case(dtperf, std::string("predict --scheme ") + t.name, args, 0.0);
  }
  {
    std::vector<std::string> args{"compare"};
    args.insert(args.end(), huge.begin(), huge.end());
    cli_case(dtperf, "compare", args, 1.0);
    cli_case(dtperf, "topologies --gpus 131072 --gpus-per-node 8",
             {"topologies", "--gpus", "131072", "--gpus-per-node", "8"}, 1.0);
  }
  std::printf("advise at 128 nodes of dgx-h100 (1,024 GPUs), one process, one core:\n");
  for (const char* model : {"llama-7b", "gpt2-xl"}) {
    const std::vector<std::string> base{"advise", "--profile", "dgx-h100", "--model", model, "--nodes", "128"};
    cli_case(dtperf, std::string(model) + ", without variable compute", base, 1.0);
    std::vector<std::string> cv = base;
    cv.insert(cv.end(), {"--compute-cv", "0.1"});
    cli_case(dtperf, std::string(model) + ", --compute-cv 0.1", cv, 5.0);
  }
  std::printf("variable compute through dtperf predict: 10,240 GPUs (1,280 x dgx-h100), resnet50, CV 10 %%, 1,000 "
              "iterations:\n");
  for (const TopologyInfo& t : topologies()) {
    cli_case(dtperf, t.name,
             {"predict", "--profile", "dgx-h100", "--model", "resnet50", "--nodes", "1280", "--scheme", t.name,
              "--compute-cv", "0.1", "--sim-iterations", "1000"},
             1.0);
  }
  cli_case(dtperf, "all-reduce",
           {"predict", "--profile", "dgx-h100", "--model", "resnet50", "--nodes", "1280", "--compute-cv", "0.1",
            "--sim-iterations", "1000"},
           1.0);
  // The limits of variable compute (limits.hpp): each scheme at the most iterations its
  // refusal of 1,000,000 offers, on 131,072 GPUs; beyond 131,072 refused up front.
  std::printf("variable compute at its limit (2^31 rank-steps): 131,072 GPUs (16,384 x dgx-h100), resnet50, CV 10 %%,\n"
              "the most --sim-iterations the refusal of 1,000,000 names:\n");
  std::vector<std::string> schemes{"all-reduce"};
  for (const TopologyInfo& t : topologies()) schemes.emplace_back(t.name);
  for (const std::string& scheme : schemes) {
    std::vector<std::string> args{"predict", "--profile", "dgx-h100", "--model", "resnet50", "--nodes", "16384",
                                  "--scheme", scheme, "--compute-cv", "0.1", "--sim-iterations", "1000000"};
    const std::string refusal = run_dtperf(dtperf, args).output;
    const std::size_t at = refusal.find("at most ");
    if (at == std::string::npos) {
      std::printf("  %-58s no limit named: %s\n", scheme.c_str(), first_line(refusal).c_str());
      continue;
    }
    const std::string most = refusal.substr(at + 8, refusal.find(' ', at + 8) - at - 8);
    args.back() = most;
    cli_case(dtperf, scheme + ", " + most + " iterations", args, 10.0);
  }
  // A command's simulations together (limits.hpp, kMaxCommandSimulationS): compare and
  // advise at 131,072 GPUs refused up front, then run at the iterations the refusal names.
  std::printf("  compare and advise at 131,072 GPUs, a command's simulations within 10 s:\n");
  for (const char* command : {"compare", "advise"}) {
    std::vector<std::string> args{command, "--profile", "dgx-h100", "--model", "resnet50", "--nodes", "16384",
                                  "--compute-cv", "0.1", "--sim-iterations", "1000"};
    const Fresh refused = run_fresh([&] {
      std::vector<std::string> argv{dtperf};
      argv.insert(argv.end(), args.begin(), args.end());
      return argv;
    }());
    std::printf("  %-58s %8.3f s  exit %d  %s\n", (std::string(command) + ", 1,000 iterations: refused").c_str(),
                refused.seconds, refused.exit_code,
                fmt_goal(refused.exit_code == 2 && refused.seconds < 1.0, 1, "s").c_str());
    const std::string refusal = run_dtperf(dtperf, args).output;
    const std::size_t at = refusal.find("at most ");
    if (at == std::string::npos) {
      std::printf("  %-58s no limit named: %s\n", command, first_line(refusal).c_str());
      continue;
    }
    args.back() = refusal.substr(at + 8, refusal.find(' ', at + 8) - at - 8);
    cli_case(dtperf, std::string(command) + ", " + args.back() + " iterations", args, 10.0);
  }
  std::printf("  beyond 131,072 GPUs, refused before anything runs:\n");
  const Fresh beyond = run_fresh({dtperf, "predict", "--profile", "dgx-h100", "--nodes", "131072", "--scheme", "ring",
                                "--compute-cv", "0.1"});
  std::printf("  %-58s %8.3f s  exit %d  %s\n", "ring on 1,048,576 GPUs", beyond.seconds, beyond.exit_code,
              fmt_goal(beyond.exit_code == 2 && beyond.seconds < 1.0, 1, "s").c_str());
  // fit --runs: its time follows the distinct configurations and how long the search runs.
  std::printf("fit --runs, ResNet-50 on p3dn-24xlarge, times drawn at random (the fit's search runs long):\n");
  const std::vector<std::string> five{"all-reduce", "ring", "one-peer-exp", "alternating-exp-ring", "sgp"};
  const std::pair<std::vector<std::string>, int> fits[] = {{five, 50}, {{"all-reduce"}, 300}, {{"all-reduce"}, 1000}};
  for (const auto& [fit_schemes, count] : fits) {
    const std::string runs = write_runs(fit_schemes, count);
    const std::string fitted = runs + ".json";
    cli_case(dtperf,
             std::to_string(count) + (fit_schemes.size() > 1 ? " runs of five schemes" : " All-Reduce runs"),
             {"fit", "--runs", runs, "--profile", "p3dn-24xlarge", "--model", "resnet50", "-o", fitted}, 10.0);
    std::remove(runs.c_str());
    std::remove(fitted.c_str());
  }
  // Past the fit's limit (limits.hpp, kMaxFitS): 300 random matchings, every rank
  // simulated, refused before the search (on up to 3 cores); 300 rings, stopped once
  // their priced predictions pass 10 s.
  for (const char* scheme : {"random-matching", "ring"}) {
    const std::string runs = write_runs({scheme}, 300);
    const Fresh f = run_fresh({dtperf, "fit", "--runs", runs, "--profile", "p3dn-24xlarge", "--model", "resnet50"});
    const bool within = f.exit_code == 0 ? f.seconds < 10.0 : f.exit_code == 2;
    std::printf("  %-58s %8.3f s  exit %d  %s\n", (std::string("300 ") + scheme + " runs").c_str(), f.seconds,
                f.exit_code, within ? "goal: < 10 s, or refused: met" : "goal: < 10 s, or refused: NOT met");
    std::remove(runs.c_str());
  }
}

}  // namespace dtperf::bench
