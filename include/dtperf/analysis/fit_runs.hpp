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
//   overhead          fixed time per distributed iteration (hooks, Python, launcher)
//   cross_node_overhead  and more once communication crosses nodes, whatever the
//                     bandwidth (compute.hpp); only where the runs include distributed
//                     runs on one node and runs on several, the only runs that separate
//                     it from the overhead
//
// Objective, over runs i and parameters j (u_j the parameter in its fitting scale: the
// logarithm for scales, efficiencies and latencies, the value itself for the kappas and
// the overhead):
//   sum_i (ln(pred_i / meas_i) / sigma_i)^2 + sum_j ((u_j - prior_j) / width_j)^2
// with sigma_i = hypot(2 %, spread_i), spread_i = ln(p90 / p10) / 2.563 (a normal's p10-p90
// width) when the run gives it, and one more term per recorded breakdown component. The
// 2 % is the model's own error floor: no analytical model is closer than that to a real
// iteration, so a tight run must not pull the fit into explaining noise.
//
// Identifiability: the posterior covariance (J^T J + diag(1/width^2))^-1 at the optimum
// gives each parameter's standard error. A parameter whose standard error is more than
// half its prior width is not identified by the runs: it is reported as such, held at its
// prior, and the fit is repeated with the identified ones only. With a single run this
// reduces to anchoring the compute term (the old `--measured-iteration-ms`), except that
// a run compute cannot explain (faster than the network allows) frees the network term
// instead of failing, and the fit says so.
//
// Models with max() in them have flat directions (communication fully hidden behind
// compute has no gradient), so the iteration starts from the best point of a coarse scan
// of each parameter over its range, not from the prior alone.
//
// Leave-one-out: every run is predicted by a fit to the others (same procedure), the
// honest estimate of how far to trust a prediction for a configuration not measured.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "dtperf/analysis/evaluator.hpp"
#include "dtperf/fit_note.hpp"
#include "dtperf/analysis/runs.hpp"
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
  overhead,
  cross_node_overhead,
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
      {RunParameter::overhead, "overhead"},
      {RunParameter::cross_node_overhead, "cross_node_overhead"},
  };
};

struct FittedParameter {
  RunParameter parameter = RunParameter::compute_scale;
  double prior = 0.0;       // natural units (seconds for latency and overhead)
  double value = 0.0;
  double low = 0.0;         // value -/+ one standard error, in natural units
  double high = 0.0;
  bool identified = false;  // false: kept at the prior
};

struct RunResidual {
  std::string label;
  double measured_s = 0.0;
  double predicted_s = 0.0;
  double error = 0.0;                    // predicted / measured - 1
  std::optional<double> leave_one_out;   // the same, fitted without this run
  IterationResult predicted;             // the breakdown the fit predicts
};

/// The parameters and how they map onto a profile and a compute scale.
struct RunsModel {
  ClusterProfile profile;
  double forward_scale = 1.0;
  double backward_scale = 1.0;
};

struct RunsFit {
  std::vector<FittedParameter> parameters;
  std::vector<RunResidual> runs;
  RunsModel fitted;
  double rms_error = 0.0;           // of ln(pred / meas) over the runs
  double median_abs_error = 0.0;    // of |pred / meas - 1|
  double max_abs_error = 0.0;
  std::optional<double> loo_median_abs_error;
  std::optional<double> loo_max_abs_error;
  std::vector<FitNote> notes;       // what the fit decided and why, for the user
};

struct RunsFitOptions {
  bool leave_one_out = true;
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

}  // namespace dtperf
