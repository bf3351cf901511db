#pragma once
// Fitting the model to measured training runs. A small set of named, physical parameters
// is fitted by bounded least squares on relative error, with the profile's values as
// priors (a Gauss-Newton / Levenberg-Marquardt iteration with box bounds; Eigen for the
// linear algebra):
//
//   compute_scale     forward and backward x this (FLOPs rooflines are 2-9x off on real
//                     models); split into forward_scale and backward_scale when a run
//                     recorded a forward/backward breakdown
//   inter_efficiency  achieved / line rate between nodes (the profile's
//                     transport_efficiency)
//   inter_host        ceiling of a host-driven transport per node (TCP: CPU time per
//                     byte), only where the profile declares one
//   inter_latency     per inter-node hop
//   intra_efficiency  achieved / link rate inside a node
//   kappa_compute     compute beside communication runs x (1 + kappa_compute)
//   kappa_comm        communication beside compute runs x (1 + kappa_comm)
//   launch_overhead   host work per collective launched (the framework's hook, the
//                     library's enqueue), on the communication stream: it grows with
//                     the buckets (ClusterProfile::Transport)
//   tensor_overhead   host work per gradient tensor of a distributed iteration that
//                     nothing hides (hooks, a framework's per-tensor coordination): it
//                     grows with the model's tensors
//   host_per_byte     per byte a rank hands to collectives (staging copies): it grows
//                     with the model's bytes
//   inter_host_per_byte  and more per byte handed when the ranks span nodes (a
//                     host-driven transport staging every byte through host memory)
//
// Nothing is a bare constant per run or per iteration: every parameter multiplies the
// work it belongs to (FLOPs, bytes on a link, hops, launches, bytes handed over), so
// that runs of another shape, scheme or model scale it as the physics does.
//
// Objective, over runs i and parameters j (u_j the parameter in its fitting scale: the
// logarithm for scales, efficiencies and latencies, the value itself for the kappas and
// the host work, in us or ns/B):
//   sum_i (ln(pred_i / meas_i) / sigma_i)^2 + sum_j ((u_j - prior_j) / width_j)^2
// with sigma_i = hypot(2 %, spread_i), spread_i = ln(p90 / p10) / 2.563 (a normal's p10-p90
// width) when the run gives it, and one more term per recorded breakdown component. The
// 2 % is the model's own error floor: no analytical model is closer than that to a real
// iteration, so a tight run must not pull the fit into explaining noise.
//
// Identifiability: the fit is the posterior mode over every parameter at once, and the
// posterior covariance there, (J^T J + diag(1/width^2))^-1 (Laplace), gives each
// parameter's standard error and their correlations. A parameter whose standard error is
// more than half its prior width is not identified by the runs alone ("open"); it is not
// reset to its prior and fitted again without (that would drop a parameter the runs pin
// jointly with another, and leave them unexplained): the covariance carries what the runs
// do and do not pin into every prediction's band (below). A single run pins one
// combination of the parameters: it is reproduced, and nothing is identified alone.
//
// Models with max() in them have flat directions (communication fully hidden behind
// compute has no gradient), so the mode is sought from several starts: a coarse scan of
// each parameter over its range and near its prior, the parameters that first solution
// narrows solved first, and the compute term first; the best is kept.
//
// Leave-one-out: every run is predicted by a fit to the others (same procedure), the
// honest estimate of how far to trust a prediction for a configuration not measured.
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "dtperf/analysis/evaluator.hpp"
#include "dtperf/analysis/runs.hpp"
#include "dtperf/fit_note.hpp"
#include "dtperf/limits.hpp"
#include "dtperf/names.hpp"

namespace dtperf {

enum class RunParameter : std::uint8_t {
  compute_scale,
  forward_scale,
  backward_scale,
  inter_efficiency,
  inter_host,
  inter_latency,
  intra_efficiency,
  kappa_compute,
  kappa_comm,
  launch_overhead,
  tensor_overhead,
  host_per_byte,
  inter_host_per_byte,
};
template <>
struct EnumNames<RunParameter> {
  static constexpr Named<RunParameter> table[] = {
      {RunParameter::compute_scale, "compute_scale"},
      {RunParameter::forward_scale, "forward_scale"},
      {RunParameter::backward_scale, "backward_scale"},
      {RunParameter::inter_efficiency, "inter_efficiency"},
      {RunParameter::inter_host, "inter_host_gbps"},
      {RunParameter::inter_latency, "inter_latency"},
      {RunParameter::intra_efficiency, "intra_efficiency"},
      {RunParameter::kappa_compute, "kappa_compute"},
      {RunParameter::kappa_comm, "kappa_comm"},
      {RunParameter::launch_overhead, "launch_overhead"},
      {RunParameter::tensor_overhead, "tensor_overhead"},
      {RunParameter::host_per_byte, "host_per_byte"},
      {RunParameter::inter_host_per_byte, "inter_host_per_byte"},
  };
};

/// Where the fit searches a parameter, in its coordinate u: natural = unit x (log ? exp(u)
/// : u), u in [low_u, high_u]. One table for the fit (fit_runs.cpp) and for the reader of a
/// fitted profile's uncertainty (profile_json.cpp), which refuses a unit or a box that the
/// fit would not write (a unit of 1e30, a negative overhead's low_u).
struct RunParameterBox {
  bool log = true;
  double unit = 1.0;
  double low_u = 0.0;
  double high_u = 0.0;
};
RunParameterBox search_box(RunParameter p);

struct FittedParameter {
  RunParameter parameter = RunParameter::compute_scale;
  double prior = 0.0;       // natural units (s for latency and per launch or tensor, s/B per byte)
  double value = 0.0;
  double low = 0.0;         // value -/+ one standard error, in natural units
  double high = 0.0;
  bool identified = false;  // narrowed by the runs to under half its prior width ("pinned")
};

struct RunResidual {
  std::string label;
  double measured_s = 0.0;
  double predicted_s = 0.0;
  double error = 0.0;                    // predicted / measured - 1
  std::optional<double> leave_one_out;   // the same, fitted without this run (or its fold)
  double prior_error = 0.0;              // the same before the fit: the profile as given
  IterationResult predicted;             // the breakdown the fit predicts
};

/// The parameters and how they map onto a profile and a compute scale.
struct RunsModel {
  ClusterProfile profile;
  double forward_scale = 1.0;
  double backward_scale = 1.0;
};

/// One parameter in a model, in natural units (s per launch or tensor, s/B per byte, the
/// interference factors less one): what the fit sets, and its value there.
void set_run_parameter(RunParameter p, double natural, RunsModel& model);
double run_parameter(RunParameter p, const RunsModel& model);
/// Whether the fit moves `p` on a log scale (scales, efficiencies, rates, latencies) or
/// by its value (the interference kappas and the host work): how a departure from its
/// prior is measured, ln(value / prior) or value - prior.
bool fitted_in_log(RunParameter p);

struct RunsFit {
  std::vector<FittedParameter> parameters;
  // For prediction bands: every parameter in its fitting scale, their joint posterior
  // covariance, the model's residual, and the identified parameters' correlations
  // (|r| >= 0.5, the pairs the runs pin only together), as a fitted profile keeps them
  // (cluster.hpp).
  std::vector<ClusterProfile::RunsFit::Parameter> uncertainty;
  std::vector<double> covariance;  // row-major, uncertainty.size() squared
  double model_sigma = 0.0;
  struct Correlation {
    RunParameter a, b;
    double r = 0.0;
  };
  std::vector<Correlation> correlations;
  std::vector<RunResidual> runs;
  RunsModel fitted;
  // The fit's objective at its mode: the sum of squared residuals in standard errors (each
  // run's ln(predicted / measured) over the model's error, each breakdown component's over
  // its own, each parameter's departure from its prior over the prior's width).
  double objective = 0.0;
  double rms_error = 0.0;           // of ln(pred / meas) over the runs
  double median_abs_error = 0.0;    // of |pred / meas - 1|
  double max_abs_error = 0.0;
  // Held-out errors: each run predicted by a fit without it. Up to kMaxHeldOutFits runs
  // that is leave-one-out (held_out_folds = runs); beyond, the runs fall into that many
  // folds (run i in fold i mod folds) and each fold is fitted without: k-fold cross-
  // validation, so the refits stay 10 whatever the number of runs (leave-one-out is one
  // refit per run, each over all the others: 100 runs took 95 s, 2,000 would take hours).
  // Each refit predicts every distinct run configuration once per step (repeats share it).
  std::optional<double> loo_median_abs_error;
  std::optional<double> loo_max_abs_error;
  int held_out_folds = 0;
  // The profile as given (every parameter at its prior), on the same runs: how far its
  // datasheet defaults were off before the runs corrected them.
  double prior_median_abs_error = 0.0;
  double prior_max_abs_error = 0.0;
  std::vector<FitNote> notes;       // what the fit decided and why, for the user
  // The fit's evaluations as its time limit counts them (RunsFitOptions::limit_s): the
  // search's and the held-out refits', each evaluation's estimated cost on the reference
  // core over the threads that shared it (limits.hpp, kMaxFitS).
  double charged_search_s = 0.0;
  double charged_refits_s = 0.0;
};

inline constexpr int kMaxHeldOutFits = 10;

struct RunsFitOptions {
  bool leave_one_out = true;  // the held-out refits (RunsFit::held_out_folds)
  /// The time the fit may take, as its evaluations are priced (limits.hpp, kMaxFitS). A
  /// fit whose first scan alone would pass it is refused before it starts; one that passes
  /// it later stops there. Either way an InputError on the runs file says what took the
  /// time and what would shorten it.
  double limit_s = limits::kMaxFitS;
  /// The time the search and the profiles of its pinned parameters may take together,
  /// priced as one thread takes them (so that the fit is the same on any number of
  /// threads): half of kMaxFitS, the rest left to the held-out refits. The profiles stop
  /// within one point of it (what they saw is kept), and a note counts the pinned
  /// parameters not profiled to the end. Not
  /// scaled with limit_s, so that a fit does not change with its limit (a lower one stops
  /// it with an error, as it stops a search).
  double profile_limit_s = 0.5 * limits::kMaxFitS;
  /// Called with (refits done, refits in all) before the held-out refits and after each
  /// (from the thread that finished it, one call at a time).
  std::function<void(int, int)> on_refit;
  /// Threads for the fit (the configurations of each evaluation) and for the held-out
  /// refits (one fold each); 0: one per core. The result is the same for any.
  int threads = 0;
  /// The parameters to consider (default: all that apply). Compute scale is always in.
  std::optional<std::vector<RunParameter>> only;
};

/// The base Setup gives the profile (without per-run overrides), the model, the dtype and
/// the reduction table; each run's configuration is applied on top. Throws InputError
/// (naming the run) when a run's scheme does not fit its cluster.
RunsFit fit_runs(const Setup& base, std::span<const MeasuredRun> runs, const RunsFitOptions& options = {});

/// Predicts one run with fitted (or prior) values: what `predict` gives with the fitted
/// profile and the compute scale.
IterationResult predict_run(const Setup& base, const RunsModel& model, const MeasuredRun& run);

// ---- Prediction bands ------------------------------------------------------------------
//
// A prediction from a fitted profile is uncertain where the runs did not pin what it
// depends on. Its P10-P90 band, by the delta method: the prediction's sensitivity to each
// parameter g_j = d ln T / d u_j (central differences of a tenth of the parameter's
// posterior standard deviation, one-sided at a bound of its range), its variance
// g^T C g over the parameters' covariance C, the model's own residual s_m added in
// quadrature, and P10 / P90 = T exp(-/+ 1.2816 sqrt(g^T C g + s_m^2)), 1.2816 being the
// standard normal's 90th percentile. Where the runs pin a combination of parameters (a
// measured configuration), C is narrow along it and so is the band of a prediction that
// depends on just that combination.

/// The models to evaluate for a band (two per parameter: below and above the fitted
/// value), around `base` (the fitted profile with any what-ifs, and its compute scales;
/// the compute scales move by their ratio to the fitted ones, so an anchor's scale on
/// top stays). Parameters a what-if fixed (`overrides`) do not move.
class BandModels {
 public:
  BandModels(const ClusterProfile::RunsFit& fit, const RunsModel& base, const ClusterOverrides& overrides = {});
  /// Empty when the fit recorded no uncertainty: no band.
  bool empty() const { return models_.empty(); }
  /// Below, above, for each moved parameter in turn.
  const std::vector<RunsModel>& models() const { return models_; }
  /// The band of `point_s` from the times at models() (same order). A ratio of two
  /// predictions (a speedup) passes the ratios and `residual_scale` sqrt(2): each carries
  /// the model's own residual. Centred on point_s x exp(g . mean_u), g = d ln T / d u:
  /// where the parameters' true values lie on average (a fit's mode: the point itself).
  Band band(double point_s, std::span<const double> times_s, double residual_scale = 1.0) const;
  /// The parameter that contributes most to that band's width (g_j^2 C_jj), "" for none.
  std::string widest(std::span<const double> times_s) const;

 private:
  std::vector<double> gradient(std::span<const double> times_s) const;
  std::vector<RunsModel> models_;
  std::vector<std::size_t> moved_;  // the fit's parameter index of each pair
  std::vector<double> step_u_;      // u above - u below, per pair
  std::vector<std::string> names_;  // every parameter's
  std::vector<double> covariance_;
  std::vector<double> mean_u_;      // every parameter's mean departure (Parameter::mean_u)
  std::size_t n_ = 0;
  double model_sigma_ = 0.0;
};

/// `scheme`'s iteration time at every band model (NaN where it does not apply), on the
/// deterministic timeline: with variable compute on, the band's sensitivities are taken
/// without it and the band is placed around the simulated prediction (an approximation to
/// first order: compute's noise scales with it, so its waiting moves the sensitivity a
/// little), which keeps a band at two deterministic predictions per parameter instead of
/// two simulations. The evaluator's compute scales and variability are restored.
std::vector<double> band_times(Evaluator& evaluator, const BandModels& models, const Scheme& scheme);

/// A datasheet value's departure across measured clusters, d = ln(fitted / datasheet) on
/// each of `clusters` clusters whose fits identify it: their mean and sample standard
/// deviation. The next cluster's departure, as a prediction interval from those
/// (a normal population, mean and spread both estimated): d ~ mean + s sqrt(1 + 1/n) t,
/// t of Student's law with n - 1 degrees of freedom. The band's P10-P90 takes it as a
/// normal term of standard deviation predictive_sd(), whose +/-1.2816 sigmas are t's 10th
/// and 90th percentiles: exact where this term dominates the band, and an approximation
/// where several add (their t laws' sum is not a t law). With fewer than two clusters the
/// spread cannot be estimated (one value gives none; Student's law with no degree of
/// freedom has no percentiles): the next cluster's departure is then known no better than
/// the fit's prior for the parameter says, and predictive_sd() is that prior's width
/// (never 0, which would read as a datasheet known exactly).
struct ClusterSpread {
  double mean_ln = 0.0;
  double sd_ln = 0.0;
  int clusters = 0;
  double prior_sd_ln = 0.0;  // the fit's prior width for the parameter (fit_runs.cpp)
  double predictive_sd() const;
};
/// The fit's prior widths (standard deviations of ln) of the two banded parameters, which
/// its search uses too: compute from FLOPs within a factor of 10 (rooflines are 2-9x off),
/// a transport's efficiency within a factor of 3 (real stacks achieve 0.09-0.9 of line
/// rate, [NET]). ln 10 and ln 3.
inline constexpr double kFlopsComputePriorSdLn = 2.302585;
inline constexpr double kInterEfficiencyPriorSdLn = 1.098612;
/// Student's t law's 90th percentile for `dof` degrees of freedom (1 and more; the
/// normal's 1.2816 in the limit). Tabulated to 4 digits for 1-30 (any statistics table,
/// e.g. NIST/SEMATECH e-Handbook 1.3.6.7.2), the normal's beyond.
double student_t90(int dof);

/// The uncertainty of a prediction no fit to runs narrows, for its band: how far the
/// datasheet's values are off, measured as what fits to real runs find on the clusters in
/// validation/data (the leave-one-cluster-out test prints each and checks these values
/// against it, tests/test_validation_loco.cpp; docs/VALIDATION.md), each as a prediction
/// interval for the next cluster (ClusterSpread):
///  - compute from FLOPs (datasheet peaks and efficiencies, or a calibration's GEMM
///    rates) is off by a factor that differs from cluster to cluster and model to model:
///    over the eight clusters whose compute comes from FLOPs ln(compute scale) has a mean
///    of 0.19 (the datasheet's compute runs x1.21 fast on average: x0.90 to x2.49) and a
///    standard deviation of 0.33; the next cluster's, 0.33 x sqrt(1 + 1/8) x t90(7) /
///    1.2816 = 0.39 (a factor of 1.47 at one sigma) around x1.21;
///  - the inter-node transport's achieved fraction of line rate: ln(efficiency / the
///    profile's) over the three clusters whose fits identify it (x0.97, x1.05 and x0.65):
///    mean -0.14, standard deviation 0.26, and with three values the next cluster's is
///    0.26 x sqrt(1 + 1/3) x t90(2) / 1.2816 = 0.44 (a factor of 1.56): three values say
///    little about a spread, and the interval says so.
/// The point prediction stays the datasheet's (the physics); only its band carries the
/// departures' mean. Independent of each other; the residual is the model's 2 % floor.
/// Host work and the intra-node links are not in it: host work's fitted departures do not
/// carry from one cluster to another, and the intra-node efficiency is identified by one
/// FSDP cluster only (x0.69 of the datasheet's NVLink rate): no spread to take. Where compute is measured
/// (`flops_compute` false: a per-layer log, a single-GPU iteration), only the link term
/// applies.
inline constexpr ClusterSpread kDatasheetCompute{0.19, 0.33, 8, kFlopsComputePriorSdLn};
inline constexpr ClusterSpread kDatasheetInterEfficiency{-0.14, 0.26, 3, kInterEfficiencyPriorSdLn};
ClusterProfile::RunsFit datasheet_uncertainty(bool flops_compute = true);

/// Where a prediction's P10-P90 band comes from: a profile fitted to runs of this model
/// (its parameters' covariance), or, where no fit applies, the datasheet's uncertainty
/// above; none with an anchor (a measured iteration the compute is scaled to) and no fit.
enum class BandSource : std::uint8_t { none, fitted, datasheet };
/// That source for a prediction of `model` on `profile`, with or without an anchor.
BandSource band_source(const ClusterProfile& profile, const std::string& model, bool anchored);

/// A run predicted with the fit, and its band.
struct PredictedRun {
  double iteration_s = 0.0;
  double p10_s = 0.0;
  double p90_s = 0.0;
};
PredictedRun predict_run_with_band(const Setup& base, const RunsFit& fit, const MeasuredRun& run);

/// The fit's uncertainty as a fitted profile keeps it (cluster.hpp).
void keep_uncertainty(const RunsFit& fit, ClusterProfile::RunsFit& kept);

}  // namespace dtperf
