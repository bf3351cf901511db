// dtperf whatif: network what-ifs for one configuration, as [NET] asks them. The scaling
// factor and NIC utilisation across inter-node rates (at the profile's transport
// efficiency and at line rate); the least rate and the least gradient compression that
// reach each target scaling factor; for a decentralized scheme, the least node count at
// which it beats All-Reduce.
#include <fmt/format.h>

#include "analysis_options.hpp"
#include "checks.hpp"
#include "commands.hpp"
#include "dtperf/io/report_charts.hpp"
#include "options.hpp"
#include "output.hpp"
#include "progress.hpp"

namespace dtperf::cli {

namespace {

struct WhatifOptions : AnalysisCliOptions {
  std::string scheme = "all-reduce";
  WhatifRequest whatif;
};

void run(WhatifOptions& o) {
  o.whatif.scheme = parse_scheme_option(o.scheme);
  Session session = o.start("whatif");
  WhatifReport report;
  {
    Progress progress("whatif", false);  // silent unless it runs past a second
    progress.stage(fmt::format("{} at every rate, target and compression", o.whatif.scheme.name()));
    report = build_whatif_report(session.prepared, o.whatif);
  }
  std::vector<std::pair<std::string, std::string>> plot;
  if (!o.output.plot_path.empty()) plot.emplace_back(o.output.plot_path, io::whatif_chart(report));
  emit(o.output, io::render(report), plot);
}

}  // namespace

void add_whatif_command(CLI::App& app) {
  auto [cmd, options] = add_command<WhatifOptions>(app, run,
      "whatif",
      "Network what-ifs: scaling factor and NIC utilization across inter-node rates (at the profile's transport\n"
      "efficiency and at line rate), the least rate and compression that reach a target scaling factor, and for a\n"
      "decentralized scheme the least node count where it beats All-Reduce.");
  WhatifRequest& w = options->whatif;
  add_scheme_option(*cmd, options->scheme);
  cmd->add_option("--rates", w.rates_gbps, "Inter-node rates per NIC to tabulate")
      ->type_name("GBPS...")->delimiter(',')->check(number_in(kMinRateGbps, kMaxRateGbps))->capture_default_str();
  cmd->add_option("--target", w.targets, "Scaling factors to solve for")
      ->type_name("FRACTION...")->delimiter(',')->check(number_in(0.0, 1.0, true))->capture_default_str();
  cmd->add_option("--codec-ns-per-byte", w.codec_ns_per_byte,
                  "Compression codec cost (encode + decode) per gradient byte, on the critical path")
      ->type_name("NS")->check(number_in(0.0, 1e6))->capture_default_str();
  cmd->add_option("--max-nodes", w.max_nodes, "Largest node count searched for a decentralized win")
      ->type_name("N")->transform(count_up_to(kMaxNodes))->capture_default_str();
  options->add_to(*cmd);
  options->output.add_plot_to(*cmd);
}

}  // namespace dtperf::cli
