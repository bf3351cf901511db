#pragma once
// One report per command, as pure data: what was modelled and what the analysis found.
// The builders below make them from loaded inputs and resolved options; io's renderers
// (io/render.hpp) print any of them as a table, JSON or CSV from the same struct; the
// command line only binds options, builds, renders and writes (docs/ARCHITECTURE.md).
// A renderer never computes a prediction again: everything it prints is in here.
//
//   Inputs + AnalysisRequest --prepare()--> Prepared {Evaluator, RunContext}
//                            --build_*_report()--> PredictReport, CompareReport, ...
//
// Pure like the rest of the analysis: no I/O, no clock. Bad values are InputErrors that
// name the input ("measured-gpus"), which the command line turns into its option.
#include <cstdint>
#include <functional>
#include <iterator>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "dtperf/analysis/advice.hpp"
#include "dtperf/analysis/evaluator.hpp"
#include "dtperf/analysis/fit_runs.hpp"
#include "dtperf/analysis/runs.hpp"
#include "dtperf/analysis/sweep.hpp"
#include "dtperf/analysis/whatif.hpp"
#include "dtperf/fit.hpp"
#include "dtperf/scenario.hpp"
#include "dtperf/topology.hpp"

namespace dtperf {

// ---- Inputs and requests -------------------------------------------------------------

/// Everything loaded for one prediction (io loads it): owns the data the engine's
/// parameter structs point into, so it outlives the Evaluator made from it.
struct Inputs {
  ClusterProfile profile;  // the what-ifs of `overrides` applied
  ClusterOverrides overrides;
  ModelSpec model;
  std::string model_source;  // as given: a built-in name or a file (errors name it)
  std::vector<std::pair<double, double>> reduction;  // [NET]'s vector-add cost, bytes and s
  DType dtype = DType::fp32;
};

/// A measured iteration the compute term is anchored on: the compute is scaled until the
/// model reproduces it (Evaluator::fit_compute_scale).
struct AnchorRequest {
  double measured_iteration_ms = 0.0;
  std::string scheme = "all-reduce";  // as the user named it
  int gpus = 0;                       // 0: the cluster's
};

/// The options of the commands that predict, resolved.
struct AnalysisRequest {
  WorkloadOptions workload;
  AllReduceOptions allreduce;
  GossipOptions gossip;
  LocalSgdOptions local_sgd;
  Variability variability;  // switched on after anchoring (a measured mean has it already)
  std::optional<AnchorRequest> anchor;
};

/// What anchoring found.
struct AnchorResult {
  double compute_scale = 1.0;
  std::string scheme;
  int gpus = 0;
  double measured_iteration_ms = 0.0;
};

/// The model as reports name it.
struct ModelSummary {
  std::string name;
  std::int64_t params = 0;
  double gradient_bytes = 0.0;
  std::size_t tensors = 0;
  std::string sample_unit;
};

/// The facts every predicting report starts with: what was modelled, with which compute
/// source, anchor, variability and what-ifs.
struct RunContext {
  std::string command;
  ClusterProfile cluster;  // as modelled, what-ifs applied
  DType dtype = DType::fp32;
  ModelSummary model;
  ComputeRequest request;
  ComputeSource compute_source = ComputeSource::automatic;
  std::string measured_device;  // where the model's measured times were taken, if it says
  double compression_ratio = 1.0;
  std::vector<std::string> what_if;  // the cluster values the options changed ("NIC rate")
  bool runs_fit_applied = false;     // the profile's fit to runs scales the compute
  BandSource band_source = BandSource::none;
  std::optional<AnchorResult> anchor;
  Variability variability;
  GossipOptions gossip;
  std::vector<std::string> warnings;  // for stderr
};

/// An evaluator set up as the request says, and the context its reports start with.
struct Prepared {
  Evaluator evaluator;
  RunContext run;
  std::string model_source;  // the model as given, for errors
  ClusterOverrides overrides;  // the what-ifs: a band does not move what they fix
};

/// Every available outcome's P10-P90 band, from run.band_source; nothing where none.
void add_bands(Prepared& prepared, std::span<SchemeOutcome> outcomes);

/// Builds the evaluator: the profile's fit to runs applied where it is this model's (a
/// warning otherwise), the anchor fitted (before variability is switched on: a measured
/// mean iteration already contains the waiting that variability causes at that scale).
/// Compute-model refusals become InputErrors naming the model.
Prepared prepare(const std::string& command, const Inputs& inputs, const AnalysisRequest& request);

/// The cluster values `overrides` changes, in words, for "(what-if: NIC rate, latency)".
std::vector<std::string> what_if_names(const ClusterOverrides& overrides);

// ---- predict, compare, advise ----------------------------------------------------------

struct PredictReport {
  RunContext run;
  AllReduceOptions allreduce;  // as run: All-Reduce, and inside local SGD's groups
  SchemeOutcome outcome;
};
/// InputError (input "scheme") when the scheme does not fit the cluster.
PredictReport build_predict_report(Prepared& prepared, const Scheme& scheme);

struct CompareReport {
  RunContext run;
  std::vector<SchemeOutcome> outcomes;  // All-Reduce first (compare_schemes)
};
CompareReport build_compare_report(Prepared& prepared, const std::function<void(const char*)>& stage = {});

/// A speedup's P10-P90 band (a ratio of iteration times).
struct SpeedupBand {
  double p10 = 0.0;
  double p90 = 0.0;
};

struct AdviseReport {
  RunContext run;
  Advice advice;
  // From a fitted profile: the best topology's speedup band (both predictions move
  // together with the parameters); where it lies on both sides of 1 the verdict is
  // "uncertain" and `settle` names the measurement that would decide it.
  std::optional<SpeedupBand> speedup_band;
  std::string settle;
};
/// `stage` is told each step of the search ("break-even bandwidth"), for progress lines.
AdviseReport build_advise_report(Prepared& prepared, const std::function<void(const char*)>& stage = {});
/// From a fitted profile: the bands of All-Reduce, the candidates and the best, and the
/// speedup's band (the verdict "uncertain" where it straddles 1).
void add_speedup_band(Prepared& prepared, AdviseReport& report);

// ---- whatif ---------------------------------------------------------------------------

struct WhatifRequest {
  Scheme scheme = Scheme::allreduce();
  std::vector<double> rates_gbps{std::begin(kDefaultRatesGbps), std::end(kDefaultRatesGbps)};
  std::vector<double> targets{0.95, 0.99};
  double codec_ns_per_byte = 0.0;  // encoding and decoding, per gradient byte
  int max_nodes = 1024;
};

struct TargetSolution {
  double scaling_factor = 0.0;  // the target
  Solved rate;                  // at the profile's transport efficiency
  Solved line_rate;             // at efficiency 1
  Solved compression;
};

struct WhatifReport {
  RunContext run;
  Scheme scheme;
  double codec_ns_per_byte = 0.0;
  IterationResult here;  // at the profile's rate
  std::optional<Band> here_band;  // from a fitted profile
  std::vector<RatePoint> rates;
  std::vector<TargetSolution> targets;
  BoundAtAnyRate bound;  // what limits the scaling factor once the NIC rate does not
  std::optional<NodesToWin> nodes_to_win;  // decentralized schemes
  int max_nodes = 0;
};
WhatifReport build_whatif_report(Prepared& prepared, const WhatifRequest& request);

// ---- sweep ----------------------------------------------------------------------------

/// A sweep's report is its context and its grid; the rows stream (run_sweep).
struct SweepReport {
  RunContext run;
  SweepGrid grid;
  std::vector<std::string> model_names;  // the model axis as given
};
/// `models`: the model axis, loaded (their addresses must outlive the report).
SweepReport build_sweep_report(Prepared& prepared, SweepAxes axes, std::vector<std::string> model_names,
                               NoiseLaw cv_law);

// ---- collective -----------------------------------------------------------------------

struct CollectivePoint {
  double bytes = 0.0;
  double predicted_s = 0.0;
  std::optional<double> measured_s;
};

struct CollectiveReport {
  std::string profile;
  Collective collective = Collective::all_reduce;
  int ranks = 0;
  int nodes = 0;
  int gpus_per_node = 0;
  double bus_factor = 1.0;
  std::vector<CollectivePoint> points;
  std::string log;  // the measured log beside the prediction, if any
  // Over the measured sizes >= 1 MiB, the error as a factor, max(p/m, m/p) - 1: its
  // geometric mean exp(mean |ln(p/m)|) - 1 and its largest. Empty without a log or such sizes.
  std::optional<double> geomean_factor_error_large;
  std::optional<double> max_factor_error_large;
};
/// The collective on `profile` at every point's size (measured times kept beside).
CollectiveReport build_collective_report(const ClusterProfile& profile, Collective collective, Algorithm algorithm,
                                         std::vector<CollectivePoint> points, std::string log);

// ---- fit (calibration) ----------------------------------------------------------------

/// One measured series of a calibration fit, fitted on every other size and predicted at
/// the sizes between (empty errors: fewer than 3 sizes).
struct HoldoutRow {
  std::string file;
  std::string collective;
  std::string group;
  int ranks = 0;
  int nodes = 0;
  std::size_t sizes = 0;
  std::optional<HoldoutErrors> errors;
};

struct FitReport {
  FitOutcome fit;
  bool holdout_requested = false;
  std::vector<HoldoutRow> holdout;
  std::string output;  // where the profile was written ("" for none)
};
FitReport build_fit_report(FitOutcome fit, bool holdout, std::string output);

// ---- fit --runs -----------------------------------------------------------------------

struct FitRunsRequest {
  std::string runs_file;
  std::string profile_name;  // as given, for the provenance
  std::string name;          // of the fitted profile ("" for PROFILE-fitted)
  std::optional<DType> dtype;
  std::string created;       // YYYY-MM-DD
  RunsFitOptions options;
};

struct FitRunsReport {
  std::string runs_file;
  std::string model;
  std::string base_profile;
  std::vector<MeasuredRun> runs;
  std::vector<int> gpus;  // per run
  RunsFit fit;
  ClusterProfile profile;  // the fitted profile
  std::string output;      // where it was written ("" for none)
};
/// InputError naming the runs file when the runs cannot be fitted.
FitRunsReport build_fit_runs_report(const Inputs& inputs, std::vector<MeasuredRun> runs, const FitRunsRequest& request,
                                    std::string output);

// ---- topologies -----------------------------------------------------------------------

struct TopologyRow {
  TopologyInfo info;
  std::optional<std::string> unavailable;  // why not on this cluster
  int period = 0;
  MixingQuality mixing;
  std::optional<Topology> schedule;  // the groups of every step, when asked
};

struct TopologiesReport {
  int gpus = 0;
  int gpus_per_node = 0;
  std::vector<TopologyRow> rows;
};
/// `stage` is told as each topology starts (its spectral gap takes seconds at 10^4 GPUs).
TopologiesReport build_topologies_report(int gpus, int gpus_per_node, bool with_schedule,
                                         const std::function<void(const char*)>& stage = {});

}  // namespace dtperf
