// dtperf predict: one configuration, one scheme. The iteration time and where it goes,
// throughput, scaling factor, bytes and NIC utilization per link level.
#include <iostream>
#include <stdexcept>

#include <fmt/format.h>

#include "commands.hpp"
#include "dtperf/allreduce.hpp"
#include "dtperf/error.hpp"
#include "dtperf/io/report.hpp"
#include "options.hpp"
#include "output.hpp"

namespace dtperf::cli {

namespace {

struct PredictOptions {
  ModelOptions model;
  AllReduceCliOptions allreduce;
  OutputOptions output;
};

/// Turns a compute-model refusal into an input error that points at the inputs.
IterationResult checked_predict(AllReducePredictor& predictor, const AllReduceScenario& scenario,
                                const ModelOptions& options) {
  try {
    return predictor.predict(scenario);
  } catch (const std::invalid_argument& e) {
    throw InputError(options.model, "", e.what());
  }
}

void run(PredictOptions& o) {
  o.model.resolve();
  o.allreduce.resolve();
  const Loaded loaded = load_inputs(o.model);
  const AllReduceScenario scenario = allreduce_scenario(loaded, o.model, o.allreduce.options);
  AllReducePredictor predictor(loaded.model);
  const IterationResult result = checked_predict(predictor, scenario, o.model);
  const ComputeSource source = resolve_compute_source(loaded.model, scenario.request);

  const io::Json json = {
      {"schema", io::kReportSchema},
      {"command", "predict"},
      {"cluster", io::cluster_json(loaded.profile, loaded.dtype)},
      {"model", io::model_json(loaded.model, scenario.request, source)},
      {"scheme", {{"name", "all-reduce"}, {"all_reduce", io::allreduce_options_json(o.allreduce.options)}}},
      {"compression_ratio", scenario.network.compression_ratio},
      {"result", io::iteration_json(result)},
  };
  const std::string text =
      fmt::format("# dtperf predict: {}\n# scheme: all-reduce ({}, {} buckets); batch {} {}s per GPU; compute: {}\n",
                  io::run_summary(loaded.profile, loaded.model, loaded.dtype), algorithm_name(o.allreduce.options.algorithm),
                  bucketing_name(o.allreduce.options.bucketing), scenario.request.batch_per_gpu,
                  loaded.model.sample_unit, compute_source_name(source)) +
      io::iteration_tables(result, loaded.model.sample_unit);
  emit_report(o.output, text, json);
}

}  // namespace

void add_predict_command(CLI::App& app) {
  auto options = std::make_shared<PredictOptions>();
  CLI::App* cmd = app.add_subcommand(
      "predict",
      "Predict one training iteration of All-Reduce data parallelism: time breakdown, throughput, scaling\n"
      "factor, bytes per link level and NIC utilization. Defaults: resnet50 on the p3dn-24xlarge profile.");
  options->model.add_to(*cmd);
  options->allreduce.add_to(*cmd);
  options->output.add_to(*cmd);
  cmd->callback([options] { run(*options); });
}

}  // namespace dtperf::cli
