// dtperf models: the built-in model zoo.
#include <iostream>

#include <fmt/format.h>

#include "commands.hpp"
#include "dtperf/io/report.hpp"
#include "dtperf/io/table.hpp"
#include "dtperf/units.hpp"
#include "dtperf/zoo.hpp"
#include "options.hpp"
#include "output.hpp"

namespace dtperf::cli {

namespace {

void run(const OutputOptions& output) {
  io::Table table({{"name", "", true}, {"params", "M"}, {"tensors", ""}, {"fwd/sample", "GFLOP"},
                   {"unit", "", true}, {"batch", ""}, {"optimizer", "", true}, {"description", "", true}});
  io::Json models = io::Json::array();
  for (const ZooEntry& entry : model_zoo()) {
    const ModelSpec m = entry.build();
    double forward_flops = 0.0;
    for (const auto& t : m.tensors) forward_flops += t.forward_flops_per_sample;
    table.add_row({m.name, io::fixed(static_cast<double>(m.total_params()) / 1e6, 2), std::to_string(m.tensors.size()),
                   io::fixed(forward_flops / 1e9, 2), m.sample_unit, io::fixed(m.default_batch_per_gpu, 0),
                   name_of(m.default_optimizer), m.description});
    models.push_back({{"name", m.name},
                      {"params", m.total_params()},
                      {"published_params", entry.published_params},
                      {"tensors", m.tensors.size()},
                      {"forward_flops_per_sample", forward_flops},
                      {"sample_unit", m.sample_unit},
                      {"default_batch_per_gpu", m.default_batch_per_gpu},
                      {"optimizer", name_of(m.default_optimizer)},
                      {"description", m.description},
                      {"citation", m.citation}});
  }
  emit_report(output, table.render(), {{"schema", io::kReportSchema}, {"command", "models"}, {"models", models}}, "/models");
}

}  // namespace

void add_models_command(CLI::App& app) {
  auto output = std::make_shared<OutputOptions>();
  CLI::App* cmd = app.add_subcommand(
      "models", "List the built-in models (computed from architecture formulas): parameters, FLOPs, defaults.");
  output->add_to(*cmd);
  cmd->callback([output] { run(*output); });
}

}  // namespace dtperf::cli
