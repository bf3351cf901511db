#pragma once
// Options of the commands that evaluate gossip schemes and anchor the compute term on a
// measurement (predict, compare, advise), and the Evaluator they build.
#include <CLI/CLI.hpp>

#include <memory>
#include <optional>
#include <string>

#include "dtperf/analysis/report.hpp"
#include "options.hpp"
#include "variability_options.hpp"

namespace dtperf::cli {

struct GossipCliOptions {
  GossipOptions options;
  void add_to(CLI::App& app);
  void resolve();

 private:
  double bucket_cap_mib_ = GossipOptions{}.bucket_cap_bytes / (1024.0 * 1024.0);  // the engine's default
};

/// Local SGD and DiLoCo (local_sgd.hpp).
struct LocalSgdCliOptions {
  LocalSgdOptions options;
  void add_to(CLI::App& app);
  void resolve();

 private:
  // The engine's defaults (local_sgd.hpp), by name.
  std::string outer_ = LocalSgdOptions{}.outer_gossip ? "gossip" : "all-reduce";
  std::string sync_ = name_of(LocalSgdOptions{}.sync);
  std::string codec_ = name_of(LocalSgdOptions{}.codec);
};

/// --measured-iteration-ms with the scheme and the GPU count it was measured at.
struct AnchorOptions {
  double measured_iteration_ms = 0.0;
  std::string measured_scheme = "all-reduce";
  int measured_gpus = 0;  // 0: the cluster's GPUs
  CLI::Option* given = nullptr;
  void add_to(CLI::App& app);
};

/// The inputs of one command and the evaluator prepared on them (which points into them:
/// they stay where they are).
struct Session {
  std::unique_ptr<const Inputs> inputs;
  Prepared prepared;
};

/// The options of predict, compare and advise, and the evaluator they build.
struct AnalysisCliOptions {
  ModelOptions model;
  AllReduceCliOptions allreduce;
  GossipCliOptions gossip;
  LocalSgdCliOptions local_sgd;
  AnchorOptions anchor;
  VariabilityCliOptions variability;
  OutputOptions output;

  /// Adds every option group, in the order --help lists them.
  void add_to(CLI::App& app);
  /// Turns the parsed strings into typed options (after parsing, before loading).
  void resolve();
  /// The analysis' request for loaded inputs (variable compute checked against the
  /// cluster, the anchor if one was given).
  AnalysisRequest request(const Inputs& inputs) const;
  /// Resolves the options, loads the inputs and prepares the evaluator and the report's
  /// context for `command` (analysis/report.hpp); the context's warnings go to stderr.
  Session start(const std::string& command);
};

/// --scheme SCHEME (predict, whatif): All-Reduce, SGP, D-PSGD, a sharded or
/// low-communication scheme, or a gossip topology.
void add_scheme_option(CLI::App& app, std::string& scheme);
/// The scheme a name stands for; InputError (input "scheme") naming the known ones.
Scheme parse_scheme_option(const std::string& name);

}  // namespace dtperf::cli
