// dtperf models: the built-in model zoo.
#include "commands.hpp"
#include "options.hpp"
#include "output.hpp"

namespace dtperf::cli {

namespace {

void run(const OutputOptions& output) { emit(output, io::render_models()); }

}  // namespace

void add_models_command(CLI::App& app) {
  auto output = std::make_shared<OutputOptions>();
  CLI::App* cmd = app.add_subcommand(
      "models", "List the built-in models (computed from architecture formulas): parameters, FLOPs, defaults.");
  output->add_to(*cmd);
  cmd->callback([output] { run(*output); });
}

}  // namespace dtperf::cli
