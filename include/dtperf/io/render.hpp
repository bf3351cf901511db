#pragma once
// Every report (analysis/report.hpp) as people and programs read it: a table with its
// words for stdout, a JSON document, and the JSON records a CSV file holds, all three
// from the same struct and, for rows, the same column lists (columns.hpp). Report JSON is
// versioned ("dtperf.report/1"), keys carry units, and its content is deterministic (no
// clock, no host name); the command line adds the invocation.
#include <span>
#include <string>
#include <vector>

#include "dtperf/analysis/report.hpp"
#include "dtperf/io/json_reader.hpp"

namespace dtperf::io {

inline constexpr const char* kReportSchema = "dtperf.report/1";

struct Rendered {
  std::string text;         // for stdout
  Json json;                // the report
  std::string csv_records;  // JSON pointer to the records of -o FILE.csv (one row each)
};

Rendered render(const PredictReport& report);
Rendered render(const CompareReport& report);
Rendered render(const AdviseReport& report);
Rendered render(const WhatifReport& report);
Rendered render(const CollectiveReport& report);
Rendered render(const TopologiesReport& report);
/// The fit's tables and words; with `output` empty, the JSON carries the profile itself.
Rendered render(const FitReport& report);
Rendered render(const FitRunsReport& report);

/// The built-in models and profiles.
Rendered render_models();
Rendered render_profiles();

// ---- Parts of the reports, for the renderers above and for tests ------------------------

/// "# dtperf predict: resnet50 (...) on 8 x p3dn-24xlarge = 64 GPUs (...)\n# batch ...\n"
/// then the links, variable compute and node-level gossip lines.
std::string run_header(const RunContext& run);
/// The report's start: schema, command, cluster, model, anchor, variable compute and
/// where the bands come from.
Json run_json(const RunContext& run);
/// Where a P10-P90 band comes from, in words ("the fitted profile's uncertainty and the
/// model's residual"); empty where the run has no band.
std::string band_origin(const RunContext& run);
/// A sweep's table header (the run's header and the point count) and JSON-lines header.
std::string sweep_header_text(const SweepReport& report);
Json sweep_header_json(const SweepReport& report);

Json iteration_json(const IterationResult& result);
/// Two tables: the time breakdown, then traffic and rates.
std::string iteration_tables(const IterationResult& result, const std::string& sample_unit);
/// "# memory per GPU: 9.8 of 32 GiB (weights 0.10, gradients ...)", "DOES NOT FIT" when so.
std::string memory_line(const MemoryBreakdown& memory);
/// One row per scheme (iteration, exposed communication, speedup, inter-node bytes, NIC
/// utilization, spectral gap, memory, p90 or p99), then the schemes that do not fit in GPU
/// memory and those that do not apply.
std::string compare_table(const std::vector<SchemeOutcome>& outcomes);
Json scheme_outcome_json(const SchemeOutcome& outcome, double allreduce_iteration_s);
/// The advisor's answer in words and small tables, and as JSON.
std::string advice_text(const Advice& advice);
Json advice_json(const Advice& advice);

}  // namespace dtperf::io
