// dtperf profiles: the built-in cluster profiles.
#include "commands.hpp"
#include "options.hpp"
#include "output.hpp"

namespace dtperf::cli {

namespace {

void run(const OutputOptions& output) { emit(output, io::render_profiles()); }

}  // namespace

void add_profiles_command(CLI::App& app) {
  auto output = std::make_shared<OutputOptions>();
  CLI::App* cmd = app.add_subcommand(
      "profiles", "List the built-in cluster profiles (from public datasheets; --json prints them whole).");
  output->add_to(*cmd);
  cmd->callback([output] { run(*output); });
}

}  // namespace dtperf::cli
