// dtperf topologies: the built-in gossip topologies, their constraints and, for a given
// cluster size, their period and spectral gap; with --schedule (JSON) the groups of every
// step, so that an implementation (such as the validation harness's) runs the same ones.
#include <fmt/format.h>

#include "commands.hpp"
#include "checks.hpp"
#include "dtperf/error.hpp"
#include "options.hpp"
#include "output.hpp"
#include "progress.hpp"

namespace dtperf::cli {

namespace {

struct TopologiesOptions {
  int gpus = 32;
  int gpus_per_node = 4;
  bool schedule = false;
  OutputOptions output;
};

void run(const TopologiesOptions& o) {
  if (o.schedule && o.gpus > limits::kMaxScheduleGpus) {
    throw InputError("--schedule", "",
                     fmt::format("lists every group of every step up to {} GPUs, got --gpus {} (docs/MANUAL.md, "
                                 "\"Limits\"); without --schedule the topologies' periods and spectral gaps are "
                                 "listed at any size",
                                 limits::kMaxScheduleGpus, o.gpus));
  }
  TopologiesReport report;
  {
    Progress progress("topologies", false);
    report = build_topologies_report(o.gpus, o.gpus_per_node, o.schedule,
                                     [&](const char* step) { progress.stage(step); });
  }
  emit(o.output, io::render(report));
}

}  // namespace

void add_topologies_command(CLI::App& app) {
  auto [cmd, options] = add_command<TopologiesOptions>(app, run,
      "topologies", "List the gossip topologies with their constraints, period and spectral gap at a cluster size.");
  cmd->add_option("--gpus", options->gpus, "Cluster size")->type_name("GPUS")->transform(count_up_to(kMaxGpus))->capture_default_str();
  cmd->add_option("--gpus-per-node", options->gpus_per_node, "Node size")
      ->type_name("G")->transform(count_up_to(kMaxGpusPerNode))->capture_default_str();
  cmd->add_flag("--schedule", options->schedule, "With --json or -o: the groups of every step of each period");
  options->output.add_to(*cmd);
}

}  // namespace dtperf::cli
