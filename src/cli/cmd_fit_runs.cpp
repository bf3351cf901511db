// dtperf fit --runs: measured training runs -> the model's parameters for this cluster
// (compute scale, link efficiencies and latency, contention, the framework's host work)
// with their uncertainty, every run's residual and leave-one-out error, and a fitted
// profile that predict, compare, advise, whatif and sweep take with --profile (and print
// bands from).
#include "cmd_fit_runs.hpp"

#include <algorithm>
#include <iostream>
#include <string>

#include <fmt/format.h>

#include "checks.hpp"
#include "dtperf/error.hpp"
#include "dtperf/analysis/fit_runs.hpp"
#include "dtperf/io/model_files.hpp"
#include "dtperf/io/profile_json.hpp"
#include "dtperf/io/runs_file.hpp"
#include "options.hpp"
#include "output.hpp"
#include "progress.hpp"

namespace dtperf::cli {

void add_fit_runs_options(CLI::App& cmd, FitRunsCliOptions& o) {
  const char* group = "Fit to measured training runs (--runs)";
  o.given = cmd.add_option("--runs", o.runs, "Measured training runs (dtperf.runs/1, JSON or JSON lines)")
                ->type_name("RUNS.json")
                ->group(group);
  cmd.add_option("-p,--profile", o.profile, "With --runs: the cluster's profile, the priors (built-in name or file)")
      ->type_name("PROFILE")
      ->group(group);
  cmd.add_option("-m,--model", o.model, "With --runs: the model the runs trained, for runs that name none (built-in name, model by size, .json or .log)")
      ->type_name("MODEL")
      ->group(group);
  one_of<DType>(cmd.add_option("--dtype", o.dtype, "With --runs: compute dtype (default: the profile's)"))->group(group);
  cmd.add_option("--reduction-log", o.reduction_log, "With --runs: measured GPU vector-add cost, as for predict")
      ->type_name("FILE")
      ->group(group);
  cmd.add_flag("--no-leave-one-out", o.no_leave_one_out, "With --runs: skip the leave-one-out refits")->group(group);
}

std::string unphysical_fit(const InputError& invalid, std::size_t inputs) {
  return fmt::format("these measurements{} fit a profile outside the physical ranges, at {}: {}; they are not "
                     "physically consistent (check their units and sizes)",
                     inputs > 1 ? fmt::format(" and those of the {} other inputs", inputs - 1) : "", invalid.where(),
                     invalid.reason());
}

void run_fit_runs(const FitRunsCliOptions& o, const std::string& output, const std::string& created, bool json) {
  if (o.profile.empty()) throw InputError("--profile", "", "--runs needs --profile: the cluster the runs ran on");
  std::vector<MeasuredRun> runs = io::read_runs_file(o.runs);
  // The model of runs that name none; not needed when every run names its own.
  std::string model = o.model;
  if (model.empty()) {
    const bool all_named = std::all_of(runs.begin(), runs.end(), [](const MeasuredRun& r) { return r.config.model; });
    if (!all_named) {
      throw InputError("--model", "", "--runs needs --model: the model the runs trained (or a \"model\" in every run)");
    }
    model = runs.front().config.model_name;
  }
  ModelOptions model_options;
  model_options.profile = o.profile;
  model_options.model = model;
  model_options.reduction_log = o.reduction_log;
  FitRunsRequest request;
  if (!o.dtype.empty()) request.dtype = model_options.cluster.dtype = parse_name<DType>(o.dtype);
  request.runs_file = o.runs;
  request.profile_name = o.profile;
  request.name = o.name;
  request.created = created;
  request.options.leave_one_out = !o.no_leave_one_out;
  const Inputs inputs = load_inputs(model_options);
  const FitRunsReport report = [&] {
    Progress progress("fit", false);
    progress.stage("fitting the runs");
    request.options.on_refit = [&progress](int done, int total) {
      if (done < total) progress.stage(fmt::format("held-out refits: {} of {} done", done, total));
    };
    return build_fit_runs_report(inputs, std::move(runs), request, output);
  }();

  const io::Json profile_json = io::profile_to_json(report.profile);
  try {
    io::parse_profile(profile_json, output);
  } catch (const InputError& e) {
    throw InputError(o.runs, "", unphysical_fit(e, 1));  // as in fit: the runs, not the program
  }
  emit_profile(output, json_text(profile_json), io::render(report), json);
}

void emit_profile(const std::string& output, const std::string& profile_text, const io::Rendered& report,
                  bool json) {
  if (output == kStdout) {  // -o -: the profile alone on stdout, the report on stderr
    std::cout << profile_text;
    std::cerr << (json ? json_text(report.json) : report.text);
    return;
  }
  if (!output.empty()) write_file_atomically(output, profile_text);
  // -o is the profile: the report goes to stdout, as a table or (--json) JSON.
  OutputOptions out;
  out.json = json;
  emit(out, report);
}

}  // namespace dtperf::cli
