// dtperf predict: one configuration, one scheme. The iteration time and where it goes,
// throughput, scaling factor, bytes and NIC utilization per link level; for gossip also
// the bytes of each step of the topology's period and its spectral gap.
#include <fmt/format.h>

#include "analysis_options.hpp"
#include "commands.hpp"
#include "dtperf/error.hpp"
#include "options.hpp"
#include "output.hpp"
#include "progress.hpp"

namespace dtperf::cli {

namespace {

struct PredictOptions : AnalysisCliOptions {
  std::string scheme = "all-reduce";
};

void run(PredictOptions& o) {
  const Scheme scheme = parse_scheme_option(o.scheme);
  Session session = o.start("predict");
  PredictReport report;
  {
    Progress progress("predict", false);  // silent unless it runs past a second
    progress.stage(scheme.name());
    report = build_predict_report(session.prepared, scheme);
  }
  emit(o.output, io::render(report));
}

}  // namespace

void add_predict_command(CLI::App& app) {
  auto [cmd, options] = add_command<PredictOptions>(app, run,
      "predict",
      "Predict one training iteration: time breakdown, throughput, scaling factor, bytes per link level and NIC\n"
      "utilization, for All-Reduce (default), a gossip topology, SGP, a sharded scheme, local SGD or DiLoCo. Defaults: resnet50 on p3dn-24xlarge.");
  add_scheme_option(*cmd, options->scheme);
  options->add_to(*cmd);
}

}  // namespace dtperf::cli
