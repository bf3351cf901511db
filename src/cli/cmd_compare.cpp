// dtperf compare: All-Reduce and every gossip topology (and SGP) side by side.
#include <fmt/format.h>

#include "analysis_options.hpp"
#include "commands.hpp"
#include "dtperf/analysis/advice.hpp"
#include "dtperf/io/report_schemes.hpp"
#include "dtperf/io/svg_chart.hpp"
#include "options.hpp"
#include "output.hpp"
#include "summary.hpp"

namespace dtperf::cli {

namespace {

void run(AnalysisCliOptions& o) {
  o.resolve();
  const Loaded loaded = load_inputs(o.model);
  std::optional<AnchorResult> anchored;
  Evaluator evaluator = o.make_evaluator(loaded, anchored);
  const std::vector<SchemeOutcome> outcomes = checked(o.model, [&] { return compare_schemes(evaluator); });

  const ComputeRequest request = compute_request(loaded.model, o.model.workload, loaded.profile.ranks());
  io::Json json = run_json("compare", loaded, request, o.model, anchored, evaluator.setup().variability);
  json["schemes"] = io::Json::array();
  for (const auto& outcome : outcomes) {
    json["schemes"].push_back(io::scheme_outcome_json(outcome, outcomes.front().iteration.iteration_s));
  }
  const std::string text = run_header("compare", loaded, request, o.model, anchored) + variability_header(evaluator.setup().variability) + gossip_header(evaluator.setup().gossip) + io::compare_table(outcomes);
  emit_report(o.output, text, json, "/schemes");
  if (!o.output.plot_path.empty()) {
    io::BarChart chart;
    chart.title = fmt::format("{} on {} x {} ({} GPUs): time per iteration", loaded.model.name, loaded.profile.nodes,
                              loaded.profile.name, loaded.profile.ranks());
    chart.y_label = "iteration (ms)";
    for (const auto& outcome : outcomes) {
      if (outcome.available) chart.bars.emplace_back(outcome.scheme.name(), outcome.iteration.iteration_s * 1e3);
    }
    write_file_atomically(o.output.plot_path, io::render_svg(chart));
  }
}

}  // namespace

void add_compare_command(CLI::App& app) {
  auto options = std::make_shared<AnalysisCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "compare",
      "All-Reduce against every gossip topology (Decent-DP) and SGP: iteration time, exposed communication,\n"
      "speedup, inter-node bytes, NIC utilization and spectral gap. Topologies that do not fit are listed with why.");
  options->add_to(*cmd);
  options->output.add_plot_to(*cmd);
  cmd->callback([options] { run(*options); });
}

}  // namespace dtperf::cli
