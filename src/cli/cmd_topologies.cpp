// dtperf topologies: the built-in gossip topologies, their constraints and, for a given
// cluster size, their period and spectral gap; with --schedule (JSON) the groups of every
// step, so that an implementation (such as the validation harness's) runs the same ones.
#include <fmt/format.h>

#include "commands.hpp"
#include "checks.hpp"
#include "dtperf/io/report.hpp"
#include "dtperf/io/report_schemes.hpp"
#include "dtperf/io/table.hpp"
#include "dtperf/mixing.hpp"
#include "dtperf/topology.hpp"
#include "options.hpp"
#include "output.hpp"

namespace dtperf::cli {

namespace {

// Every step of the period: its mixing rule and its rounds of disjoint groups of ranks
// (a directed step: the distance every rank sends over).
io::Json schedule_json(const Topology& t) {
  io::Json steps = io::Json::array();
  for (const Step& step : t.steps) {
    if (step.mixing == Mixing::push_average) {
      steps.push_back({{"mixing", "push_average"}, {"send_to", fmt::format("(i + {}) mod {}", step.shift, t.ranks)}});
      continue;
    }
    io::Json rounds = io::Json::array();
    for (const Round& round : step.rounds) {
      io::Json groups = io::Json::array();
      for (std::size_t g = 0; g < round.groups(); ++g) {
        const auto members = round.group(g);
        groups.push_back(std::vector<int>(members.begin(), members.end()));
      }
      rounds.push_back(groups);
    }
    steps.push_back({{"mixing", step.mixing == Mixing::group_average ? "group_average" : "neighbour_average"},
                     {"rounds", rounds}});
  }
  return steps;
}

struct TopologiesOptions {
  int gpus = 32;
  int gpus_per_node = 4;
  bool schedule = false;
  OutputOptions output;
};

void run(const TopologiesOptions& o) {
  if (o.gpus % o.gpus_per_node != 0) {
    throw InputError("--gpus", "", fmt::format("{} GPUs do not fill whole nodes of {}", o.gpus, o.gpus_per_node));
  }
  io::Table table({{"name", "", true}, {"period", "steps"}, {"spectral-gap", ""}, {"exact/period", ""},
                   {"needs", "", true}, {"description", "", true}});
  io::Json list = io::Json::array();
  std::string unavailable;
  for (const TopologyInfo& info : topologies()) {
    io::Json j = {{"name", info.name}, {"description", info.description}, {"constraint", info.constraint}};
    if (const auto problem = topology_unavailable(info.name, o.gpus, o.gpus_per_node)) {
      j["available"] = false;
      j["reason"] = *problem;
      table.add_row({info.name, "-", "-", "-", info.constraint, info.description});
    } else {
      const Topology t = make_topology(info.name, o.gpus, o.gpus_per_node);
      const MixingQuality q = mixing_quality(t);
      j["available"] = true;
      j["period"] = t.period();
      j["mixing"] = io::mixing_json(q);
      if (o.schedule) j["schedule"] = schedule_json(t);
      table.add_row({info.name, std::to_string(t.period()), io::fixed(q.spectral_gap, 4),
                     q.exact_average_per_period ? "yes" : "no", info.constraint, info.description});
    }
    list.push_back(j);
  }
  const std::string text =
      fmt::format("# gossip topologies on {} GPUs in nodes of {}\n", o.gpus, o.gpus_per_node) + table.render();
  emit_report(o.output, text,
              {{"schema", io::kReportSchema},
               {"command", "topologies"},
               {"gpus", o.gpus},
               {"gpus_per_node", o.gpus_per_node},
               {"topologies", list}},
              "/topologies");
}

}  // namespace

void add_topologies_command(CLI::App& app) {
  auto options = std::make_shared<TopologiesOptions>();
  CLI::App* cmd = app.add_subcommand(
      "topologies", "List the gossip topologies with their constraints, period and spectral gap at a cluster size.");
  cmd->add_option("--gpus", options->gpus, "Cluster size")->type_name("GPUS")->check(count_up_to(kMaxGpus))->capture_default_str();
  cmd->add_option("--gpus-per-node", options->gpus_per_node, "Node size")
      ->type_name("G")->check(count_up_to(kMaxGpusPerNode))->capture_default_str();
  cmd->add_flag("--schedule", options->schedule, "With --json or -o: the groups of every step of each period");
  options->output.add_to(*cmd);
  cmd->callback([options] { run(*options); });
}

}  // namespace dtperf::cli
