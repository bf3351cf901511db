#pragma once
// Options of the commands that evaluate gossip schemes and anchor the compute term on a
// measurement (predict, compare, advise), and the Evaluator they build.
#include <CLI/CLI.hpp>

#include <optional>
#include <string>

#include "dtperf/analysis/evaluator.hpp"
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
  std::string outer_ = "all-reduce";
  std::string sync_ = "blocking";
  std::string codec_ = "fp32";
};

/// --measured-iteration-ms with the scheme and the GPU count it was measured at.
struct AnchorOptions {
  double measured_iteration_ms = 0.0;
  std::string measured_scheme = "all-reduce";
  int measured_gpus = 0;  // 0: the cluster's GPUs
  CLI::Option* given = nullptr;
  void add_to(CLI::App& app);
};

/// What anchoring found, for the report.
struct AnchorResult {
  double compute_scale = 1.0;
  std::string scheme;
  int gpus = 0;
  double measured_iteration_ms = 0.0;
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
  /// Builds the evaluator for loaded inputs and applies the anchor if one was given.
  /// Compute-model refusals become input errors naming the model. The anchor is fitted
  /// before variability is switched on: a measured mean iteration already contains the
  /// waiting that variability causes at that scale.
  Evaluator make_evaluator(const Loaded& loaded, std::optional<AnchorResult>& anchored) const;
};

/// Runs `f`, turning the compute model's std::invalid_argument into an InputError.
template <typename F>
auto checked(const ModelOptions& model, F&& f) -> decltype(f());

}  // namespace dtperf::cli

#include <stdexcept>

#include "dtperf/error.hpp"

namespace dtperf::cli {
template <typename F>
auto checked(const ModelOptions& model, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const std::invalid_argument& e) {
    throw InputError(model.model, "", e.what());
  }
}
}  // namespace dtperf::cli
