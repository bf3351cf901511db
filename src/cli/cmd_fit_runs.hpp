#pragma once
// The --runs mode of dtperf fit (cmd_fit_runs.cpp): its options and its run.
#include <CLI/CLI.hpp>

#include <cstddef>
#include <string>

#include "dtperf/error.hpp"
#include "dtperf/io/render.hpp"

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

/// The reason a fit's measurements are refused when the profile they fit to fails the
/// profile's own ranges (`invalid`, from reading it back): every measurement was in range,
/// but together they describe no machine a profile can hold. `inputs`: how many files.
std::string unphysical_fit(const InputError& invalid, std::size_t inputs);

/// A fit's profile to `output` (a file written whole, or stdout for "-" with the report on
/// stderr) and its report on stdout (table, or JSON with `json`).
void emit_profile(const std::string& output, const std::string& profile_text, const io::Rendered& report,
                  bool json);

/// Fits, prints the report (table or JSON) and, with an output path, writes the profile.
void run_fit_runs(const FitRunsCliOptions& options, const std::string& output, const std::string& created, bool json);

}  // namespace dtperf::cli
