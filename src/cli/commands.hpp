#pragma once
// One function per subcommand, each in its own file (cmd_<name>.cpp), registering the
// subcommand, its help text and its options on the application.
#include <CLI/CLI.hpp>

#include <memory>
#include <string>
#include <utility>

namespace dtperf::cli {

/// Registers the subcommand `name` with its help text, whose action is `run(options)`;
/// returns the command and its options (which live as long as the command) for the
/// caller to bind its options to.
template <class Options, class Run>
std::pair<CLI::App*, Options*> add_command(CLI::App& app, Run run, const std::string& name, const std::string& help) {
  auto options = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(name, help);
  cmd->callback([options, run] { run(*options); });
  return {cmd, options.get()};
}

void add_predict_command(CLI::App& app);
void add_compare_command(CLI::App& app);
void add_advise_command(CLI::App& app);
void add_fit_command(CLI::App& app);
void add_topologies_command(CLI::App& app);
void add_models_command(CLI::App& app);
void add_profiles_command(CLI::App& app);
void add_whatif_command(CLI::App& app);
void add_collective_command(CLI::App& app);
void add_sweep_command(CLI::App& app);
void add_merge_command(CLI::App& app);

}  // namespace dtperf::cli
