// The reports of collective, fit (calibration), fit --runs and topologies.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "dtperf/analysis/report.hpp"
#include "dtperf/error.hpp"
#include "dtperf/mixing.hpp"
#include "dtperf/units.hpp"
#include "dtperf/version.hpp"

namespace dtperf {

CollectiveReport build_collective_report(const ClusterProfile& profile, Collective collective, Algorithm algorithm,
                                         std::vector<CollectivePoint> points, std::string log) {
  CollectiveReport r;
  r.profile = profile.name;
  r.collective = collective;
  r.ranks = profile.ranks();
  r.nodes = profile.nodes;
  r.gpus_per_node = profile.gpus_per_node;
  r.bus_factor = *bus_factor(name_of(collective), r.ranks);
  r.log = std::move(log);
  NetworkParams net = network_params(profile, 1.0, {});
  net.launch_s = 0.0;  // a bare collective: no training framework around it
  const GroupShape group{profile.nodes, profile.gpus_per_node, profile.gpus_per_node};
  double log_sum = 0.0;
  double worst = 0.0;
  int large = 0;
  for (CollectivePoint& p : points) {
    p.predicted_s = collective_cost(net, group, collective, p.bytes, algorithm).time_s;
    if (p.measured_s && p.bytes >= units::MiB) {
      const double ratio = p.predicted_s / *p.measured_s;
      // As a factor, max(p/m, m/p) - 1, for the mean and the worst alike.
      log_sum += std::abs(std::log(ratio));
      worst = std::max(worst, std::exp(std::abs(std::log(ratio))) - 1.0);
      ++large;
    }
  }
  r.points = std::move(points);
  if (large > 0) {
    r.geomean_factor_error_large = std::exp(log_sum / large) - 1.0;
    r.max_factor_error_large = worst;
  }
  return r;
}

FitReport build_fit_report(FitOutcome fit, bool holdout, std::string output) {
  FitReport r;
  r.holdout_requested = holdout;
  if (holdout) {
    for (const MeasuredSeries& s : fit.series) {
      r.holdout.push_back({s.file, s.collective, s.group, s.ranks, s.nodes, s.points.size(),
                           holdout_errors(s.collective, s.ranks, s.nodes, s.points)});
    }
  }
  r.fit = std::move(fit);
  r.output = std::move(output);
  return r;
}

namespace {

// The profile the runs fitted: the fitted parameters on the base, its compute scales for
// the model the runs trained, and the fit in its provenance.
ClusterProfile fitted_profile(const RunsFit& fit, const FitRunsRequest& request, const std::vector<std::string>& models) {
  ClusterProfile p = fit.fitted.profile;
  p.name = request.name.empty() ? p.name + "-fitted" : request.name;
  // The compute scales hold for the dtype the runs computed in: it becomes the default.
  if (request.dtype) p.compute.dtype = *request.dtype;
  p.runs_fit = ClusterProfile::RunsFit{models, fit.fitted.forward_scale, fit.fitted.backward_scale,
                                       static_cast<int>(fit.runs.size()), fit.rms_error, fit.loo_median_abs_error,
                                       fit.loo_max_abs_error};
  keep_uncertainty(fit, *p.runs_fit);
  p.provenance.source = "calibrated";
  p.provenance.created = request.created;
  p.provenance.tool = std::string("dtperf fit --runs ") + kVersion;
  p.provenance.notes = fmt::format("fitted to {} measured runs of {} ({}) on top of profile '{}'", fit.runs.size(),
                                   fmt::join(models, ", "), request.runs_file, request.profile_name);
  p.provenance.residuals.clear();
  for (const RunResidual& r : fit.runs) {
    p.provenance.residuals.push_back(fmt::format("run {}: measured {:.3f} ms, predicted {:.3f} ms ({:+.2f} %)", r.label,
                                                 r.measured_s / units::ms, r.predicted_s / units::ms, 100.0 * r.error));
  }
  return p;
}

}  // namespace

FitRunsReport build_fit_runs_report(const Inputs& inputs, std::vector<MeasuredRun> runs, const FitRunsRequest& request,
                                    std::string output) {
  Setup base;
  base.cluster = inputs.profile;
  base.model = &inputs.model;
  base.dtype = inputs.dtype;
  base.reduction = inputs.reduction;
  FitRunsReport r;
  try {
    r.fit = fit_runs(base, runs, request.options);
  } catch (const std::invalid_argument& e) {
    throw InputError(request.runs_file, "", e.what());
  }
  r.runs_file = request.runs_file;
  r.model = inputs.model.name;
  r.base_profile = inputs.profile.name;
  for (const MeasuredRun& run : runs) {
    const ClusterOverrides& c = run.config.cluster;
    r.gpus.push_back(c.nodes.value_or(inputs.profile.nodes) * c.gpus_per_node.value_or(inputs.profile.gpus_per_node));
  }
  r.runs = std::move(runs);
  std::vector<std::string> models;  // in the runs' order, once each
  for (const MeasuredRun& run : r.runs) {
    const std::string& name = run.config.model ? run.config.model->name : inputs.model.name;
    if (std::find(models.begin(), models.end(), name) == models.end()) models.push_back(name);
  }
  r.profile = fitted_profile(r.fit, request, models);
  r.output = std::move(output);
  return r;
}

TopologiesReport build_topologies_report(int gpus, int gpus_per_node, bool with_schedule,
                                         const std::function<void(const char*)>& stage) {
  if (gpus % gpus_per_node != 0) {
    throw InputError::in_input("gpus", fmt::format("{} GPUs do not fill whole nodes of {}", gpus, gpus_per_node));
  }
  TopologiesReport r{gpus, gpus_per_node, {}};
  const auto all = topologies();
  for (std::size_t i = 0; i < all.size(); ++i) {
    const TopologyInfo& info = all[i];
    if (stage) stage(fmt::format("{} ({} of {} topologies)", info.name, i + 1, all.size()).c_str());
    TopologyRow row;
    row.info = info;
    row.unavailable = topology_unavailable(info.name, gpus, gpus_per_node);
    if (!row.unavailable) {
      Topology t = make_topology(info.name, gpus, gpus_per_node);
      row.period = t.period();
      row.mixing = mixing_quality(t);
      if (with_schedule) row.schedule = std::move(t);
    }
    r.rows.push_back(std::move(row));
  }
  return r;
}

}  // namespace dtperf
