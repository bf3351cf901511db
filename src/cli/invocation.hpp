#pragma once
// What the program was run with, kept for the provenance in reports: the tool's version,
// the arguments as given and the scenario file they came from, if any.
#include <string>
#include <vector>

#include "dtperf/io/json_reader.hpp"
#include "dtperf/version.hpp"

namespace dtperf::cli {

inline const std::string kToolVersion = std::string("dtperf ") + kVersion;

/// Called once by main, before the command runs.
void record_invocation(std::vector<std::string> arguments, std::string scenario);

/// {"tool": "dtperf 0.1.0", "arguments": [...], "scenario": FILE (when one was run)}.
io::Json invocation_json();

/// The same without the options named (with their values: "--name V", "--name=V", and for
/// a one-letter name "-nV"), and without the flags named: for a record that must not
/// depend on where the output went or how the work was split.
io::Json invocation_json_without(const std::vector<std::string>& options, const std::vector<std::string>& flags);

}  // namespace dtperf::cli
