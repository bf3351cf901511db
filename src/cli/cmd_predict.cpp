// dtperf predict: one configuration, one scheme. The iteration time and where it goes,
// throughput, scaling factor, bytes and NIC utilization per link level; for gossip also
// the bytes of each step of the topology's period and its spectral gap.
#include <fmt/format.h>

#include "analysis_options.hpp"
#include "commands.hpp"
#include "dtperf/error.hpp"
#include "dtperf/io/report.hpp"
#include "dtperf/io/report_schemes.hpp"
#include "dtperf/topology.hpp"
#include "options.hpp"
#include "output.hpp"
#include "summary.hpp"

namespace dtperf::cli {

namespace {

struct PredictOptions : AnalysisCliOptions {
  std::string scheme = "all-reduce";
};

Scheme parse_scheme_option(const std::string& name) {
  if (const auto scheme = parse_scheme(name)) return *scheme;
  const std::vector<std::string> names = scheme_names();
  throw InputError("--scheme", "",
                   fmt::format("unknown scheme '{}'{}; expected one of: {}", name, did_you_mean(name, names),
                               join_names(names)));
}

void run(PredictOptions& o) {
  o.resolve();
  const Scheme scheme = parse_scheme_option(o.scheme);
  const Loaded loaded = load_inputs(o.model);
  std::optional<AnchorResult> anchored;
  Evaluator evaluator = o.make_evaluator(loaded, anchored);
  const SchemeOutcome outcome = checked(o.model, [&] { return evaluator.evaluate(scheme, {}, true); });
  if (!outcome.available) throw InputError("--scheme", "", outcome.unavailable_reason);

  const ComputeRequest request = compute_request(loaded.model, o.model.workload, loaded.profile.ranks());
  io::Json json = run_json("predict", loaded, request, o.model, anchored, evaluator.setup().variability);
  io::Json scheme_json = {{"name", scheme.name()}};
  if (scheme.kind == Scheme::Kind::allreduce) scheme_json["all_reduce"] = io::allreduce_options_json(o.allreduce.options);
  if (scheme.low_communication()) {
    scheme_json["inner_all_reduce"] = io::allreduce_options_json(o.allreduce.options);
  } else if (scheme.kind != Scheme::Kind::allreduce) {
    scheme_json["bucket_cap_MiB"] = o.gossip.options.bucket_cap_bytes / units::MiB;
    scheme_json["node_level"] = o.gossip.options.node_level;
  }
  json["scheme"] = scheme_json;
  json["result"] = io::iteration_json(outcome.iteration);
  json["memory"] = io::memory_json(outcome.memory);
  if (!outcome.steps.empty()) {
    json["period"] = outcome.steps.size();
    json["steps"] = io::steps_json(outcome);
  }
  if (!outcome.step_iteration_s.empty()) {
    json["step_iteration_p50_ms"] = outcome.step_p50_s / units::ms;
    json["step_iteration_p90_ms"] = outcome.step_p90_s / units::ms;
  }
  if (outcome.mixing) json["mixing"] = io::mixing_json(*outcome.mixing);
  if (outcome.local_sgd) json["round"] = io::local_sgd_json(*outcome.local_sgd, outcome.local_sgd_options);
  if (outcome.variability) json["variability"] = io::variability_json(*outcome.variability, outcome.idle_per_rank_s);

  std::string text = run_header("predict", loaded, request, o.model, anchored) +
                     variability_header(evaluator.setup().variability) + gossip_header(evaluator.setup().gossip);
  text += fmt::format("# scheme: {}", scheme.name());
  if (scheme.kind == Scheme::Kind::allreduce || scheme.low_communication()) {
    text += fmt::format(" ({}{}, {} buckets)", scheme.low_communication() ? "inside groups: " : "", name_of(o.allreduce.options.algorithm),
                        name_of(o.allreduce.options.bucketing));
  } else if (outcome.mixing) {
    text += fmt::format(" (period {} steps, spectral gap {:.4g}{})", outcome.steps.size(), outcome.mixing->spectral_gap,
                        outcome.mixing->exact_average_per_period ? ", exact average every period" : "");
  }
  text += "\n" + io::memory_line(outcome.memory);
  text += "\n" + io::iteration_tables(outcome.iteration, loaded.model.sample_unit);
  if (outcome.variability) text += "\n" + io::variability_table(*outcome.variability);
  if (!outcome.steps.empty()) text += "\n" + io::steps_table(outcome);
  if (outcome.local_sgd) text += "\n" + io::local_sgd_table(*outcome.local_sgd, outcome.local_sgd_options);
  emit_report(o.output, text, json, "/result");
}

}  // namespace

void add_predict_command(CLI::App& app) {
  auto options = std::make_shared<PredictOptions>();
  CLI::App* cmd = app.add_subcommand(
      "predict",
      "Predict one training iteration: time breakdown, throughput, scaling factor, bytes per link level and NIC\n"
      "utilization, for All-Reduce (default), a gossip topology, SGP, a sharded scheme, local SGD or DiLoCo. Defaults: resnet50 on p3dn-24xlarge.");
  cmd->add_option("-s,--scheme", options->scheme, "all-reduce, sgp, sgp-sync, d-psgd, zero-1, zero-2, fsdp (zero-3), hsdp, local-sgd, diloco, or a gossip topology (dtperf topologies)")
      ->type_name("SCHEME")->capture_default_str();
  options->add_to(*cmd);
  cmd->callback([options] { run(*options); });
}

}  // namespace dtperf::cli
