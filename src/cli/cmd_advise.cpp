// dtperf advise: should I decentralize? The verdict, the speedup of the best topology,
// the share of each of [DEC]'s three factors, the break-even points and the caveats.
#include "analysis_options.hpp"
#include "commands.hpp"
#include "dtperf/analysis/advice.hpp"
#include "dtperf/io/report_schemes.hpp"
#include "options.hpp"
#include "progress.hpp"
#include "output.hpp"
#include "summary.hpp"

namespace dtperf::cli {

namespace {

void run(AnalysisCliOptions& o) {
  o.resolve();
  const Loaded loaded = load_inputs(o.model);
  std::optional<AnchorResult> anchored;
  Evaluator evaluator = o.make_evaluator(loaded, anchored);
  Advice advice;
  {
    Progress progress("advise", false);
    advice = checked(o.model, [&] { return advise(evaluator, [&](const char* step) { progress.stage(step); }); });
  }

  const ComputeRequest request = compute_request(loaded.model, o.model.workload, loaded.profile.ranks());
  io::Json json = run_json("advise", loaded, request, o.model, anchored, evaluator.setup().variability);
  json["advice"] = io::advice_json(advice);
  emit_report(o.output, run_header("advise", loaded, request, o.model, anchored) + variability_header(evaluator.setup().variability) + gossip_header(evaluator.setup().gossip) + io::advice_text(advice), json, "/advice/candidates");
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
