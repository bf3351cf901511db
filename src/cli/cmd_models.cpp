// dtperf models: the built-in model zoo.
#include "commands.hpp"
#include "output.hpp"

namespace dtperf::cli {

void add_models_command(CLI::App& app) {
  add_list_command(app, "models",
                   "List the built-in models (computed from architecture formulas): parameters, FLOPs, defaults.",
                   io::render_models);
}

}  // namespace dtperf::cli
