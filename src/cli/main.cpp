// dtperf: predicts distributed training iteration times. Exit codes: 0 ok, 1 failure,
// 2 bad usage or input (one message on stderr naming the file, place and reason).
#include <CLI/CLI.hpp>

#include <iostream>
#include <string>
#include <vector>

#include "commands.hpp"
#include "dtperf/error.hpp"
#include "scenario_file.hpp"

namespace {

constexpr const char* kRunHelp =
    "Usage: dtperf run SCENARIO.json [OPTIONS...]\n"
    "Run the command a scenario file describes (schema dtperf.scenario/1; see scenarios/).\n"
    "Options after the file are added to the file's and override them.\n";

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "dtperf: how long one training iteration takes on your cluster, where the time goes, and\n"
      "whether decentralized (gossip) training would be faster."};
  app.require_subcommand(1);
  app.set_version_flag("--version", "dtperf 0.1.0");
  // Options given twice (a scenario file's, then the command line's) keep the last.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.footer("dtperf run SCENARIO.json [OPTIONS...] runs a scenario file (see scenarios/).");
  dtperf::cli::add_predict_command(app);
  dtperf::cli::add_compare_command(app);
  dtperf::cli::add_advise_command(app);
  dtperf::cli::add_fit_command(app);
  dtperf::cli::add_models_command(app);
  dtperf::cli::add_profiles_command(app);
  dtperf::cli::add_topologies_command(app);
  std::string scenario;  // the scenario file being run, if any
  try {
    std::vector<std::string> args(argv + 1, argv + argc);
    if (!args.empty() && args.front() == "run") {
      if (args.size() < 2 || args[1] == "--help" || args[1] == "-h") {
        std::cout << kRunHelp;
        return args.size() < 2 ? 2 : 0;
      }
      scenario = args[1];
      std::vector<std::string> expanded = dtperf::cli::scenario_arguments(app, scenario);
      expanded.insert(expanded.end(), args.begin() + 2, args.end());
      args = std::move(expanded);
    }
    std::reverse(args.begin(), args.end());  // CLI11 takes them last to first
    app.parse(args);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    if (!scenario.empty()) {
      std::cerr << "dtperf: error: " << scenario << ": " << e.what() << "\n";
      return 2;
    }
    app.exit(e);
    return 2;
  } catch (const dtperf::InputError& e) {
    std::cerr << "dtperf: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "dtperf: internal error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
