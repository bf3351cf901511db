#pragma once
// Scenario files (schema "dtperf.scenario/1"): a what-if question as JSON, run with
// `dtperf run FILE [more options]`. The file names a command and its options by their
// long names; they become that command's arguments, so every value is checked exactly
// as on the command line, and options given after FILE override the file's.
//
//   {"schema": "dtperf.scenario/1",
//    "description": "Should the 4xA40 cluster decentralize?",
//    "command": "advise",
//    "options": {"profile": "a40x4-eth25", "model": "resnet50", "compute-cv": 0.1,
//                "slow-rank": ["3=1.2"], "json": true}}
//
// Numbers and strings become `--name value`, true becomes `--name` (a flag; false omits
// it), an array repeats the option. Unknown commands and options are errors at their
// JSON pointer, with a suggestion.
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace dtperf::cli {

/// The arguments (after the program name) that the scenario file stands for.
std::vector<std::string> scenario_arguments(const CLI::App& app, const std::string& path);

}  // namespace dtperf::cli
