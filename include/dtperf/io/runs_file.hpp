#pragma once
// Measured training runs as a file (schema "dtperf.runs/1"), either one JSON object
//   {"schema": "dtperf.runs/1", "description": "...", "runs": [{...}, ...]}
// or JSON lines: a first line {"schema": "dtperf.runs/1", ...} and then one run object per
// line (what a collector appends to). Every run names its configuration with the
// snake_case names of the what-if options (scheme, nodes, gpus_per_node, batch_per_gpu or
// global_batch, bucket_cap_mib, algorithm, nic_gbps, ...) and its measurement:
//   "iteration_ms": 73.0   or   {"median": 73.0, "p10": 71.9, "p90": 75.2}
//   "breakdown_ms": {"forward": 20.1, "backward": 41.7, "exposed_comm": 9.0, "optimizer": 2.2}
// docs/MANUAL.md ("The runs file") lists every key. Parsing is strict: an
// unknown key, a wrong type, a value out of range, p10 > median > p90, a duplicate label
// or a file without runs is an InputError naming the file, the line (JSON lines) and the
// JSON pointer.
#include <string>
#include <vector>

#include "dtperf/analysis/runs.hpp"

namespace dtperf::io {

inline constexpr const char* kRunsSchema = "dtperf.runs/1";

std::vector<MeasuredRun> parse_runs(const std::string& text, const std::string& file);
std::vector<MeasuredRun> read_runs_file(const std::string& path);

}  // namespace dtperf::io
