// Scenario files (dtperf.scenario/1): the arguments `dtperf run FILE` makes of one,
// checked against dtperf's real commands and options.
#include <CLI/CLI.hpp>

#include <cstdint>

#include "../src/cli/commands.hpp"
#include "../src/cli/scenario_file.hpp"
#include "dtperf/error.hpp"
#include "fuzz_input.hpp"

namespace {

CLI::App& application() {
  static CLI::App* app = [] {
    auto* a = new CLI::App{"dtperf"};
    dtperf::cli::add_predict_command(*a);
    dtperf::cli::add_compare_command(*a);
    dtperf::cli::add_advise_command(*a);
    dtperf::cli::add_fit_command(*a);
    dtperf::cli::add_models_command(*a);
    dtperf::cli::add_profiles_command(*a);
    dtperf::cli::add_whatif_command(*a);
    dtperf::cli::add_collective_command(*a);
    dtperf::cli::add_sweep_command(*a);
    dtperf::cli::add_topologies_command(*a);
    return a;
  }();
  return *app;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace dtperf;
  try {
    const io::Json json = io::parse_json_text(fuzz::text_of(data, size), "fuzz.json");
    (void)cli::scenario_arguments(application(), json, "fuzz.json", {"--nodes", "4"});
  } catch (const InputError&) {
  }
  return 0;
}
