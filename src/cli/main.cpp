// dtperf: predicts distributed training iteration times. Exit codes: 0 ok, 1 failure,
// 2 bad usage or input (one message on stderr naming the file, place and reason).
#include <CLI/CLI.hpp>

#include <iostream>

#include "commands.hpp"
#include "dtperf/error.hpp"

int main(int argc, char** argv) {
  CLI::App app{
      "dtperf: how long one training iteration takes on your cluster, where the time goes, and\n"
      "whether decentralized (gossip) training would be faster."};
  app.require_subcommand(1);
  app.set_version_flag("--version", "dtperf 0.1.0");
  dtperf::cli::add_predict_command(app);
  dtperf::cli::add_compare_command(app);
  dtperf::cli::add_advise_command(app);
  dtperf::cli::add_fit_command(app);
  dtperf::cli::add_models_command(app);
  dtperf::cli::add_profiles_command(app);
  dtperf::cli::add_topologies_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
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
