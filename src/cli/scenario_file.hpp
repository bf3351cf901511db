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
// JSON pointer, with a suggestion. Errors in a value found later (by the option's check,
// or when the command uses it) are reported at the value's JSON pointer too: the
// pointers are kept with the arguments.
#include <CLI/CLI.hpp>

#include <map>
#include <string>
#include <vector>

#include "dtperf/io/json_reader.hpp"

namespace dtperf::cli {

struct ScenarioArguments {
  std::vector<std::string> args;                 // after the program name
  std::map<std::string, std::string> pointers;   // option long name -> JSON pointer of its value
};

/// `overrides`: the arguments given after the file; the file's options among them are
/// left out (the command line decides them, and a bad value the file gives for them
/// does not stop the run).
ScenarioArguments scenario_arguments(const CLI::App& app, const io::Json& json, const std::string& file,
                                     const std::vector<std::string>& overrides = {});
ScenarioArguments read_scenario_file(const CLI::App& app, const std::string& path,
                                     const std::vector<std::string>& overrides = {});

}  // namespace dtperf::cli
