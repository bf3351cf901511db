#pragma once
// Workloads from files, and the one entry point that resolves a `--model` argument:
//   a zoo name                         e.g. "resnet50" (see `dtperf models`);
//   a per-layer timing log (*.log)     the [NET] `.bk.log` format: line 1 a comment,
//                                      line 2 the number of batches averaged, line 3 the
//                                      number of tensors, then `wait_us,bytes` per tensor
//                                      in backward order (negative waits count as 0);
//   a JSON layer file (*.json)         schema "dtperf.model/1", documented in
//                                      README.md ("Describing your own model").
// Reduction-cost tables (`bytes,seconds` per line, the [NET] cuda_vec_add.log) load here
// too. Every error names the file and the line or JSON pointer.
#include <string>
#include <utility>
#include <vector>

#include "dtperf/workload.hpp"

namespace dtperf::io {

inline constexpr const char* kModelSchema = "dtperf.model/1";

ModelSpec read_timing_log(const std::string& path);
ModelSpec parse_timing_log(const std::string& text, const std::string& file);

ModelSpec read_layer_file(const std::string& path);
ModelSpec parse_layer_json(const std::string& text, const std::string& file);

/// Zoo name, *.log or *.json.
ModelSpec load_model(const std::string& name_or_path);

/// Measured iteration times, one positive number per line (any unit: only their ratios
/// to their mean are used), '#' comments and blank lines allowed, at least two values.
std::vector<double> read_iteration_times(const std::string& path);
std::vector<double> parse_iteration_times(const std::string& text, const std::string& file);

/// `bytes,seconds` lines, sorted by bytes (the [NET] vector-add cost log).
std::vector<std::pair<double, double>> read_reduction_log(const std::string& path);
std::vector<std::pair<double, double>> parse_reduction_log(const std::string& text,
                                                           const std::string& file);

}  // namespace dtperf::io
