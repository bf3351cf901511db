// dtperf predict: one configuration, one scheme. The iteration time and where it goes,
// throughput, scaling factor, bytes and NIC utilization per link level; for gossip also
// the bytes of each step of the topology's period and its spectral gap.
#include <fmt/format.h>

#include "analysis_options.hpp"
#include "commands.hpp"
#include "dtperf/error.hpp"
#include "options.hpp"
#include "output.hpp"

namespace dtperf::cli {

namespace {

struct PredictOptions : AnalysisCliOptions {
  std::string scheme = "all-reduce";
};

void run(PredictOptions& o) {
  const Scheme scheme = parse_scheme_option(o.scheme);
  Session session = o.start("predict");
  emit(o.output, io::render(build_predict_report(session.prepared, scheme)));
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
