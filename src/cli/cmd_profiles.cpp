// dtperf profiles: the built-in cluster profiles.
#include <iostream>

#include "commands.hpp"
#include "dtperf/io/profile_json.hpp"
#include "dtperf/io/report.hpp"
#include "dtperf/io/table.hpp"
#include "dtperf/units.hpp"
#include "options.hpp"
#include "output.hpp"

namespace dtperf::cli {

namespace {

void run(const OutputOptions& output) {
  io::Table table({{"name", "", true}, {"nodes", ""}, {"GPUs/node", ""}, {"GPU", "", true}, {"intra", "GB/s"},
                   {"NICs", ""}, {"NIC", "Gbit/s"}, {"eff", ""}, {"provenance", "", true}});
  io::Json profiles = io::Json::array();
  for (const ClusterProfile& p : io::builtin_profiles()) {
    table.add_row({p.name, std::to_string(p.nodes), std::to_string(p.gpus_per_node), p.gpu.model,
                   io::fixed(p.intra.bandwidth_bytes_per_s / units::GB, 1), std::to_string(p.inter.nics_per_node),
                   io::fixed(p.inter.nic_gbps, 0), io::fixed(p.inter.transport_efficiency, 2), p.provenance.source});
    profiles.push_back(io::profile_to_json(p));
  }
  emit_report(output, table.render(), {{"schema", io::kReportSchema}, {"command", "profiles"}, {"profiles", profiles}}, "/profiles");
}

}  // namespace

void add_profiles_command(CLI::App& app) {
  auto output = std::make_shared<OutputOptions>();
  CLI::App* cmd = app.add_subcommand(
      "profiles", "List the built-in cluster profiles (from public datasheets; --json prints them whole).");
  output->add_to(*cmd);
  cmd->callback([output] { run(*output); });
}

}  // namespace dtperf::cli
