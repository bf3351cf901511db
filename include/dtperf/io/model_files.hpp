#pragma once
// Workloads from files, and the one entry point that resolves a `--model` argument:
//   a zoo name                         e.g. "resnet50" (see `dtperf models`);
//   a model by size                    "gpt:layers=24,d=2048,seq=2048" or "llama:...";
//                                      keys and defaults in src/io/model_by_size.cpp;
//   a per-layer timing log (*.log)     the [NET] `.bk.log` format: line 1 a comment,
//                                      line 2 the number of batches averaged, line 3 the
//                                      number of tensors, then `wait_us,bytes` per tensor
//                                      in backward order (negative waits count as 0);
//   a JSON layer file (*.json)         schema "dtperf.model/1", documented in
//                                      docs/MANUAL.md ("Your own model").
// Reduction-cost tables (`bytes,seconds` per line, the [NET] cuda_vec_add.log) load here
// too. Every error names the file and the line or JSON pointer.
#include <optional>
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

/// Zoo name, model by size, *.log or *.json.
ModelSpec load_model(const std::string& name_or_path);

/// "gpt:key=value,..." or "llama:key=value,...": the model of that shape; nullopt for
/// any other name. A bad key or value is an InputError naming the input "model".
std::optional<ModelSpec> sized_model(const std::string& spec);

/// Measured iteration times, one positive number per line (any unit: only their ratios
/// to their mean are used), '#' comments and blank lines allowed, at least two values.
std::vector<double> read_iteration_times(const std::string& path);
std::vector<double> parse_iteration_times(const std::string& text, const std::string& file);

/// `bytes,seconds` lines, sorted by bytes (the [NET] vector-add cost log).
std::vector<std::pair<double, double>> read_reduction_log(const std::string& path);
std::vector<std::pair<double, double>> parse_reduction_log(const std::string& text,
                                                           const std::string& file);

}  // namespace dtperf::io
