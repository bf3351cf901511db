// dtperf fit --runs: measured training runs -> the model's parameters for this cluster
// (compute scale, link efficiencies and latency, contention, overhead) with their
// uncertainty, every run's residual and leave-one-out error, and a fitted profile that
// predict, compare and advise take with --profile.
#include "cmd_fit_runs.hpp"

#include <iostream>
#include <span>

#include <fmt/format.h>

#include "checks.hpp"
#include "dtperf/error.hpp"
#include "dtperf/analysis/fit_runs.hpp"
#include "dtperf/io/fit_note_text.hpp"
#include "dtperf/io/model_files.hpp"
#include "dtperf/io/profile_json.hpp"
#include "dtperf/io/report.hpp"
#include "dtperf/io/runs_file.hpp"
#include "dtperf/io/table.hpp"
#include "dtperf/units.hpp"
#include "options.hpp"
#include "invocation.hpp"
#include "output.hpp"

namespace dtperf::cli {

namespace {

// Natural units for printing: latencies and the overhead in us / ms, the rest as is.
struct Shown {
  double scale;
  const char* unit;
};
Shown shown(RunParameter p) {
  switch (p) {
    case RunParameter::inter_latency: return {1.0 / units::us, "us"};
    case RunParameter::overhead:
    case RunParameter::cross_node_overhead: return {1.0 / units::ms, "ms"};
    case RunParameter::inter_host: return {1.0, "Gbit/s"};
    case RunParameter::compute_scale:
    case RunParameter::forward_scale:
    case RunParameter::backward_scale: return {1.0, "x"};
    default: return {1.0, ""};
  }
}

const char* meaning(RunParameter p) {
  switch (p) {
    case RunParameter::compute_scale: return "forward and backward x this";
    case RunParameter::forward_scale: return "forward x this";
    case RunParameter::backward_scale: return "backward x this";
    case RunParameter::inter_efficiency: return "achieved / line rate between nodes";
    case RunParameter::inter_host: return "host-driven transport ceiling per node";
    case RunParameter::inter_latency: return "latency per inter-node hop";
    case RunParameter::intra_efficiency: return "achieved / link rate inside a node";
    case RunParameter::kappa_compute: return "compute beside communication runs x (1 + this)";
    case RunParameter::kappa_comm: return "communication beside compute runs x (1 + this)";
    case RunParameter::overhead: return "fixed time per distributed iteration";
    case RunParameter::cross_node_overhead: return "and more once communication crosses nodes";
  }
  return "";
}

std::string number(double x) { return fmt::format("{:.4g}", x); }

std::string parameters_table(const RunsFit& fit) {
  io::Table table({{"parameter", "", true}, {"prior", ""}, {"fitted", ""}, {"-1se", ""}, {"+1se", ""}, {"unit", "", true},
                   {"status", "", true}});
  for (const FittedParameter& p : fit.parameters) {
    const Shown s = shown(p.parameter);
    table.add_row({name_of(p.parameter), number(p.prior * s.scale), number(p.value * s.scale),
                   p.identified ? number(p.low * s.scale) : "-", p.identified ? number(p.high * s.scale) : "-", s.unit,
                   p.identified ? "fitted" : "prior"});
  }
  return table.render();
}

std::string runs_table(const RunsFit& fit, std::span<const MeasuredRun> runs, const ClusterProfile& base) {
  io::Table table({{"run", "", true}, {"scheme", "", true}, {"GPUs", ""}, {"measured", "ms"}, {"predicted", "ms"},
                   {"error", "%"}, {"loo-error", "%"}});
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const RunResidual& r = fit.runs[i];
    const RunConfig& c = runs[i].config;
    const int gpus = c.cluster.nodes.value_or(base.nodes) * c.cluster.gpus_per_node.value_or(base.gpus_per_node);
    table.add_row({r.label, c.scheme.name(), std::to_string(gpus), io::fixed(r.measured_s / units::ms, 2),
                   io::fixed(r.predicted_s / units::ms, 2), fmt::format("{:+.1f}", 100.0 * r.error),
                   r.leave_one_out ? fmt::format("{:+.1f}", 100.0 * *r.leave_one_out) : "-"});
  }
  return table.render();
}

std::string summary_line(const RunsFit& fit) {
  std::string text = fmt::format("# {} runs: rms {:.2f} %, median |error| {:.2f} %, max {:.2f} %", fit.runs.size(),
                                 100.0 * fit.rms_error, 100.0 * fit.median_abs_error, 100.0 * fit.max_abs_error);
  if (fit.loo_median_abs_error) {
    text += fmt::format("; leave-one-out median {:.2f} %, max {:.2f} %", 100.0 * *fit.loo_median_abs_error,
                        100.0 * *fit.loo_max_abs_error);
  }
  return text + "\n";
}

io::Json fit_json(const RunsFit& fit) {
  io::Json parameters = io::Json::array();
  for (const FittedParameter& p : fit.parameters) {
    const Shown s = shown(p.parameter);
    io::Json j = {{"name", name_of(p.parameter)},
                  {"meaning", meaning(p.parameter)},
                  {"unit", s.unit},
                  {"prior", p.prior * s.scale},
                  {"value", p.value * s.scale},
                  {"identified", p.identified}};
    if (p.identified) {
      j["minus_one_se"] = p.low * s.scale;
      j["plus_one_se"] = p.high * s.scale;
    }
    parameters.push_back(j);
  }
  io::Json runs = io::Json::array();
  for (const RunResidual& r : fit.runs) {
    io::Json j = {{"label", r.label},
                  {"measured_ms", r.measured_s / units::ms},
                  {"predicted_ms", r.predicted_s / units::ms},
                  {"error", r.error},
                  {"predicted", io::iteration_json(r.predicted)}};
    if (r.leave_one_out) j["leave_one_out_error"] = *r.leave_one_out;
    runs.push_back(j);
  }
  io::Json summary = {{"rms_error", fit.rms_error},
                      {"median_abs_error", fit.median_abs_error},
                      {"max_abs_error", fit.max_abs_error}};
  if (fit.loo_median_abs_error) {
    summary["loo_median_abs_error"] = *fit.loo_median_abs_error;
    summary["loo_max_abs_error"] = *fit.loo_max_abs_error;
  }
  return {{"parameters", parameters}, {"runs", runs}, {"summary", summary}, {"notes", fit_notes_json(fit.notes)}};
}

ClusterProfile fitted_profile(const RunsFit& fit, const FitRunsCliOptions& o, const ModelSpec& model,
                              const std::string& created) {
  ClusterProfile p = fit.fitted.profile;
  p.name = o.name.empty() ? p.name + "-fitted" : o.name;
  // The compute scales hold for the dtype the runs computed in: it becomes the default.
  if (!o.dtype.empty()) p.compute.dtype = *parse_name<DType>(o.dtype);
  p.runs_fit = ClusterProfile::RunsFit{model.name,        fit.fitted.forward_scale, fit.fitted.backward_scale,
                                       static_cast<int>(fit.runs.size()), fit.rms_error,
                                       fit.loo_median_abs_error, fit.loo_max_abs_error};
  p.provenance.source = "calibrated";
  p.provenance.created = created;
  p.provenance.tool = "dtperf fit --runs 0.1.0";
  p.provenance.notes = fmt::format("fitted to {} measured runs of {} ({}) on top of profile '{}'", fit.runs.size(),
                                   model.name, o.runs, o.profile);
  p.provenance.residuals.clear();
  for (const RunResidual& r : fit.runs) {
    p.provenance.residuals.push_back(fmt::format("run {}: measured {:.3f} ms, predicted {:.3f} ms ({:+.2f} %)", r.label,
                                                 r.measured_s / units::ms, r.predicted_s / units::ms, 100.0 * r.error));
  }
  return p;
}

}  // namespace

void add_fit_runs_options(CLI::App& cmd, FitRunsCliOptions& o) {
  const char* group = "Fit to measured training runs (--runs)";
  o.given = cmd.add_option("--runs", o.runs, "Measured training runs (dtperf.runs/1, JSON or JSON lines)")
                ->type_name("RUNS.json")
                ->group(group);
  cmd.add_option("-p,--profile", o.profile, "With --runs: the cluster's profile, the priors (built-in name or file)")
      ->type_name("PROFILE")
      ->group(group);
  cmd.add_option("-m,--model", o.model, "With --runs: the model the runs trained (built-in name, .json or .log)")
      ->type_name("MODEL")
      ->group(group);
  one_of<DType>(cmd.add_option("--dtype", o.dtype, "With --runs: compute dtype (default: the profile's)"))->group(group);
  cmd.add_option("--reduction-log", o.reduction_log, "With --runs: measured GPU vector-add cost, as for predict")
      ->type_name("FILE")
      ->group(group);
  cmd.add_flag("--no-leave-one-out", o.no_leave_one_out, "With --runs: skip the leave-one-out refits")->group(group);
}

void run_fit_runs(const FitRunsCliOptions& o, const std::string& output, const std::string& created, bool json) {
  if (o.profile.empty()) throw InputError("--profile", "", "--runs needs --profile: the cluster the runs ran on");
  if (o.model.empty()) throw InputError("--model", "", "--runs needs --model: the model the runs trained");
  const std::vector<MeasuredRun> runs = io::read_runs_file(o.runs);
  ModelOptions model_options;
  model_options.profile = o.profile;
  model_options.model = o.model;
  model_options.reduction_log = o.reduction_log;
  if (!o.dtype.empty()) model_options.cluster.dtype = parse_name<DType>(o.dtype);
  const Loaded loaded = load_inputs(model_options);

  Setup base;
  base.cluster = loaded.profile;
  base.model = &loaded.model;
  base.dtype = loaded.dtype;
  base.reduction = loaded.reduction;
  RunsFitOptions fit_options;
  fit_options.leave_one_out = !o.no_leave_one_out;
  const RunsFit fit = [&] {
    try {
      return fit_runs(base, runs, fit_options);
    } catch (const std::invalid_argument& e) {
      throw InputError(o.runs, "", e.what());
    }
  }();

  const ClusterProfile profile = fitted_profile(fit, o, loaded.model, created);
  const io::Json profile_json = io::profile_to_json(profile);
  try {
    io::parse_profile(profile_json, output);
  } catch (const InputError& e) {
    throw std::logic_error(std::string("the fitted profile does not parse: ") + e.what());
  }
  if (!output.empty()) write_file_atomically(output, json_text(profile_json));

  if (json) {
    io::Json report = {{"schema", io::kReportSchema},
                       {"command", "fit --runs"},
                       {"runs_file", o.runs},
                       {"model", loaded.model.name},
                       {"base_profile", loaded.profile.name},
                       {"fit", fit_json(fit)}};
    if (!output.empty()) report["profile"] = output;
    report["invocation"] = invocation_json();
    std::cout << json_text(report);
    return;
  }
  std::cout << fmt::format("# dtperf fit --runs {}: {} on {} ({} runs)\n", o.runs, loaded.model.name,
                           loaded.profile.name, runs.size());
  std::cout << parameters_table(fit) << "# prior: kept at the profile's value, the runs do not identify it\n\n";
  std::cout << runs_table(fit, runs, loaded.profile) << summary_line(fit);
  for (const auto& note : fit.notes) std::cout << "# note: " << fit_note_text(note) << "\n";
  if (!output.empty()) {
    std::cout << fmt::format("# Wrote the fitted profile '{}' to {} (use it with --profile {})\n", profile.name,
                             output, output);
  }
}

}  // namespace dtperf::cli
