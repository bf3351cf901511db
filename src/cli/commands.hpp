#pragma once
// One function per subcommand, each in its own file (cmd_<name>.cpp), registering the
// subcommand, its help text and its options on the application.
#include <CLI/CLI.hpp>

namespace dtperf::cli {

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

}  // namespace dtperf::cli
