#pragma once
// Options shared by the commands that predict (predict, compare, advise): what to
// model (profile, model), the what-if overrides of the cluster and the workload, and the
// All-Reduce settings. Each option's metavar names its unit; defaults are shown in --help.
#include <CLI/CLI.hpp>

#include <string>
#include <utility>
#include <vector>

#include "dtperf/allreduce.hpp"
#include "dtperf/analysis/report.hpp"
#include "dtperf/cluster.hpp"
#include "dtperf/scenario.hpp"
#include "dtperf/workload.hpp"

namespace dtperf::cli {

struct ModelOptions {
  std::string profile = "p3dn-24xlarge";
  std::string model = "resnet50";
  std::string reduction_log;  // [NET] vector-add cost, bytes,seconds per line
  ClusterOverrides cluster;
  WorkloadOptions workload;
  void add_to(CLI::App& app);
  /// Moves the values of options that were given into the optionals above.
  void resolve();

 private:
  struct Raw;
  std::shared_ptr<Raw> raw_;
};

struct AllReduceCliOptions {
  AllReduceOptions options;
  void add_to(CLI::App& app);
  void resolve();

 private:
  // The engine's defaults (allreduce.hpp), by name and in the options' units.
  std::string algorithm_ = name_of(AllReduceOptions{}.algorithm);
  std::string bucketing_ = name_of(AllReduceOptions{}.bucketing);
  double bucket_cap_mib_ = AllReduceOptions{}.bucket_cap_bytes / (1024.0 * 1024.0);
  double first_bucket_mib_ = AllReduceOptions{}.first_bucket_cap_bytes / (1024.0 * 1024.0);
  double fusion_cycle_ms_ = AllReduceOptions{}.fusion_cycle_s * 1e3;
  double fusion_buffer_mib_ = AllReduceOptions{}.fusion_buffer_bytes / (1024.0 * 1024.0);
};

/// Output selection: a table on stdout (default), JSON on stdout, or a file (-o),
/// whose format follows its extension (.json or .csv where supported).
struct OutputOptions {
  bool json = false;
  std::string output_path;
  std::string plot_path;  // --plot FILE.svg, on the commands that draw a chart
  void add_to(CLI::App& app);
  /// Adds --plot (the commands that draw a chart call it beside add_to).
  void add_plot_to(CLI::App& app);
};

/// The profile (what-ifs applied), the model and the reduction log the options name.
Inputs load_inputs(const ModelOptions& options);

}  // namespace dtperf::cli
