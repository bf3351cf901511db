// dtperf advise: should I decentralize? The verdict, the speedup of the best topology,
// the share of each of [DEC]'s three factors, the break-even points and the caveats.
#include "analysis_options.hpp"
#include "commands.hpp"
#include "options.hpp"
#include "output.hpp"
#include "progress.hpp"

namespace dtperf::cli {

namespace {

void run(AnalysisCliOptions& o) {
  Session session = o.start("advise");
  std::optional<AdviseReport> report;
  {
    Progress progress("advise", false);
    report = build_advise_report(session.prepared, [&](const char* step) { progress.stage(step); });
  }
  emit(o.output, io::render(*report));
}

}  // namespace

void add_advise_command(CLI::App& app) {
  auto [cmd, options] = add_command<AnalysisCliOptions>(app, run,
      "advise",
      "Should I decentralize? The best gossip topology and its speedup over All-Reduce, how much of the gain\n"
      "comes from overlap, heterogeneous links and variable compute, the break-even bandwidth and node count,\n"
      "and the caveats (consensus, accumulation).");
  options->add_to(*cmd);
}

}  // namespace dtperf::cli
