// dtperf profiles: the built-in cluster profiles.
#include "commands.hpp"
#include "output.hpp"

namespace dtperf::cli {

void add_profiles_command(CLI::App& app) {
  add_list_command(app, "profiles",
                   "List the built-in cluster profiles (from public datasheets; --json prints them whole).",
                   io::render_profiles);
}

}  // namespace dtperf::cli
