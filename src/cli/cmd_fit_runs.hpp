#pragma once
// The --runs mode of dtperf fit (cmd_fit_runs.cpp): its options and its run.
#include <CLI/CLI.hpp>

#include <string>

namespace dtperf::cli {

struct FitRunsCliOptions {
  std::string runs;
  std::string profile;
  std::string model;
  std::string dtype;
  std::string reduction_log;
  std::string name;  // shared with the calibration mode's --name
  bool no_leave_one_out = false;
  CLI::Option* given = nullptr;
};

void add_fit_runs_options(CLI::App& cmd, FitRunsCliOptions& options);

/// Fits, prints the report (table or JSON) and, with an output path, writes the profile.
void run_fit_runs(const FitRunsCliOptions& options, const std::string& output, const std::string& created, bool json);

}  // namespace dtperf::cli
