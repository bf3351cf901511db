// dtperf collective: one collective over a size range on a profile, printed as nccl-tests
// prints it (so that it diffs against a user's own log), or, with --log, a measured log
// beside the prediction for its own collective, ranks and nodes.
#include <fmt/format.h>

#include <cstdint>

#include "checks.hpp"
#include "commands.hpp"
#include "dtperf/error.hpp"
#include "dtperf/io/nccl_tests.hpp"
#include "dtperf/io/profile_json.hpp"
#include "dtperf/network.hpp"
#include "dtperf/scenario.hpp"
#include "dtperf/units.hpp"
#include "options.hpp"
#include "output.hpp"

namespace dtperf::cli {

namespace {

struct CollectiveCliOptions {
  std::string collective = "all_reduce";
  std::string profile = "dgx-h100";
  std::string algorithm = "auto";
  std::string log;
  std::uint64_t min_bytes = 8;
  std::uint64_t max_bytes = 128ull << 20;
  int step_factor = 2;
  int nodes = 0, gpus_per_node = 0, nics_per_node = 0;
  double nic_gbps = 0.0, transport_efficiency = 0.0, inter_latency_us = -1.0;
  OutputOptions output;
  CLI::Option *o_nodes{}, *o_gpn{}, *o_nics{}, *o_nic{}, *o_eff{}, *o_lat{}, *o_collective{};
};

bool given(const CLI::Option* option) { return option != nullptr && option->count() > 0; }

void run(const CollectiveCliOptions& o) {
  const auto algorithm = parse_name<Algorithm>(o.algorithm);
  ClusterProfile profile = io::load_profile(o.profile);
  Collective collective = *parse_name<Collective>(o.collective);
  std::vector<CollectivePoint> points;
  if (!o.log.empty()) {
    io::NcclTestsOptions options;
    if (given(o.o_collective)) options.collective = o.collective;
    if (given(o.o_nodes)) options.nodes = o.nodes;
    const io::NcclTestsLog log = io::read_nccl_tests_file(o.log, options);
    const auto parsed = parse_name<Collective>(log.collective);
    if (!parsed) {
      throw InputError(o.log, "", fmt::format("dtperf does not predict {} (it predicts all_reduce, all_gather, "
                                              "reduce_scatter, alltoall, sendrecv and broadcast)", log.collective));
    }
    collective = *parsed;
    if (log.nodes < 1) throw InputError(o.log, "", "the log does not say how many nodes it spans").needing("nodes");
    profile.nodes = log.nodes;
    profile.gpus_per_node = log.ranks / log.nodes;
    for (const auto& [bytes, seconds] : io::bytes_and_time_s(log, io::NcclTestsColumn::faster)) {
      points.push_back({bytes, 0.0, seconds});
    }
  } else {
    if (o.max_bytes < o.min_bytes) {
      throw InputError::in_input("max-bytes", fmt::format("{} is below --min-bytes {}", o.max_bytes, o.min_bytes));
    }
    for (double b = static_cast<double>(o.min_bytes); b <= static_cast<double>(o.max_bytes); b *= o.step_factor) {
      points.push_back({b, 0.0, std::nullopt});
    }
  }
  ClusterOverrides overrides;
  if (given(o.o_nodes)) overrides.nodes = o.nodes;
  if (given(o.o_gpn)) overrides.gpus_per_node = o.gpus_per_node;
  if (given(o.o_nics)) overrides.nics_per_node = o.nics_per_node;
  if (given(o.o_nic)) overrides.nic_gbps = o.nic_gbps;
  if (given(o.o_eff)) overrides.transport_efficiency = o.transport_efficiency;
  if (given(o.o_lat)) overrides.inter_latency_s = o.inter_latency_us * units::us;
  profile = apply_overrides(profile, overrides);
  if (profile.ranks() < 2) {
    throw InputError::in_input("nodes", "a collective needs at least 2 ranks (--nodes, --gpus-per-node)");
  }
  emit(o.output, io::render(build_collective_report(profile, collective, *algorithm, std::move(points), o.log)));
}

}  // namespace

void add_collective_command(CLI::App& app) {
  auto [cmd, o] = add_command<CollectiveCliOptions>(app, run,
      "collective",
      "Predict one collective over a size range, printed as nccl-tests prints it; with --log, a measured nccl-tests\n"
      "log beside the prediction for its own collective, ranks and nodes.");
  o->o_collective = one_of<Collective>(cmd->add_option("-c,--collective", o->collective, "The collective"))
                        ->capture_default_str();
  cmd->add_option("-p,--profile", o->profile, "Cluster profile: a built-in name or a JSON file")->capture_default_str();
  one_of<Algorithm>(cmd->add_option("--algorithm", o->algorithm, "all_reduce algorithm (auto: as NCCL's tuner picks)"))
      ->capture_default_str();
  cmd->add_option("-b,--min-bytes", o->min_bytes, "Smallest size (nccl-tests -b; K, M, G suffixes)")
      ->transform(CLI::AsSizeValue(false))->transform(decimal_digits(true))
      ->check(CLI::Range(1.0, 1125899906842624.0))->capture_default_str();
  cmd->add_option("-e,--max-bytes", o->max_bytes, "Largest size (nccl-tests -e)")
      ->transform(CLI::AsSizeValue(false))->transform(decimal_digits(true))
      ->check(CLI::Range(1.0, 1125899906842624.0))->capture_default_str();
  cmd->add_option("-f,--step-factor", o->step_factor, "Size multiplier between rows (nccl-tests -f)")
      ->transform(decimal_digits(false))->check(CLI::Range(2, 1024))->capture_default_str();
  o->o_nodes = cmd->add_option("--nodes", o->nodes, "Number of nodes")->type_name("N")->transform(count_up_to(kMaxNodes));
  o->o_gpn = cmd->add_option("--gpus-per-node", o->gpus_per_node, "GPUs (ranks) per node")
                 ->type_name("G")->transform(count_up_to(kMaxGpusPerNode));
  o->o_nics = cmd->add_option("--nics-per-node", o->nics_per_node, "NICs per node")
                  ->type_name("K")->transform(count_up_to(kMaxGpusPerNode));
  o->o_nic = cmd->add_option("--nic-gbps", o->nic_gbps, "Line rate of one NIC")
                 ->type_name("GBIT/S")->check(number_in(limits::kNicGbps));
  o->o_eff = cmd->add_option("--transport-efficiency", o->transport_efficiency, "Achieved / line rate between nodes")
                 ->type_name("FRACTION")->check(number_in(limits::kEfficiency));
  o->o_lat = cmd->add_option("--inter-latency-us", o->inter_latency_us, "Latency per inter-node hop")
                 ->type_name("US")->check(number_in(limits::kLatencyUs));
  cmd->add_option("--log", o->log, "A measured nccl-tests log (text or -J JSON) to print beside the prediction")
      ->type_name("FILE");
  o->output.add_to(*cmd);
}

}  // namespace dtperf::cli
