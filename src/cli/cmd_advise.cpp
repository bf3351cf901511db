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
  o.resolve();
  const Inputs inputs = load_inputs(o.model);
  Prepared prepared = o.prepare("advise", inputs);
  std::optional<AdviseReport> report;
  {
    Progress progress("advise", false);
    report = build_advise_report(prepared, [&](const char* step) { progress.stage(step); });
  }
  emit(o.output, io::render(*report));
}

}  // namespace

void add_advise_command(CLI::App& app) {
  auto options = std::make_shared<AnalysisCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "advise",
      "Should I decentralize? The best gossip topology and its speedup over All-Reduce, how much of the gain\n"
      "comes from overlap, heterogeneous links and variable compute, the break-even bandwidth and node count,\n"
      "and the caveats (consensus, accumulation).");
  options->add_to(*cmd);
  cmd->callback([options] { run(*options); });
}

}  // namespace dtperf::cli
