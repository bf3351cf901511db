// dtperf compare: All-Reduce and every gossip topology (and SGP) side by side.
#include "analysis_options.hpp"
#include "commands.hpp"
#include "dtperf/io/report_charts.hpp"
#include "options.hpp"
#include "output.hpp"
#include "progress.hpp"

namespace dtperf::cli {

namespace {

void run(AnalysisCliOptions& o) {
  Session session = o.start("compare");
  CompareReport report;
  {
    Progress progress("compare", false);
    report = build_compare_report(session.prepared, [&](const char* step) { progress.stage(step); });
  }
  std::vector<std::pair<std::string, std::string>> plot;
  if (!o.output.plot_path.empty()) plot.emplace_back(o.output.plot_path, io::compare_chart(report));
  emit(o.output, io::render(report), plot);
}

}  // namespace

void add_compare_command(CLI::App& app) {
  auto [cmd, options] = add_command<AnalysisCliOptions>(app, run,
      "compare",
      "All-Reduce against every gossip topology (Decent-DP) and SGP: iteration time, exposed communication,\n"
      "speedup, inter-node bytes, NIC utilization and spectral gap. Topologies that do not fit are listed with why.");
  options->add_to(*cmd);
  options->output.add_plot_to(*cmd);
}

}  // namespace dtperf::cli
