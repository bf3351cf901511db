// dtperf collective: one collective over a size range on a profile, printed as nccl-tests
// prints it (so that it diffs against a user's own log), or, with --log, a measured log
// beside the prediction for its own collective, ranks and nodes.
#include <fmt/format.h>

#include <cmath>
#include <cstdint>

#include "checks.hpp"
#include "commands.hpp"
#include "dtperf/error.hpp"
#include "dtperf/fit.hpp"
#include "dtperf/io/nccl_tests.hpp"
#include "dtperf/io/profile_json.hpp"
#include "dtperf/io/report.hpp"
#include "dtperf/io/table.hpp"
#include "dtperf/network.hpp"
#include "dtperf/scenario.hpp"
#include "dtperf/units.hpp"
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
  bool json = false;
  CLI::Option *o_nodes{}, *o_gpn{}, *o_nics{}, *o_nic{}, *o_eff{}, *o_lat{}, *o_collective{};
};

bool given(const CLI::Option* option) { return option != nullptr && option->count() > 0; }

struct Point {
  double bytes = 0.0;
  double predicted_s = 0.0;
  std::optional<double> measured_s;
};

// nccl-tests' per-rank element count for a size (float elements).
std::int64_t count_of(Collective c, double bytes, int ranks) {
  const bool per_rank = c == Collective::all_gather || c == Collective::reduce_scatter || c == Collective::alltoall;
  return static_cast<std::int64_t>(bytes / 4.0 / (per_rank ? ranks : 1));
}

// nccl-tests prints times with 2 decimals, fewer as they grow (common.cu).
std::string time_text(double us) {
  if (us >= 1e6) return fmt::format("{:7.0f}", us);
  if (us >= 1e4) return fmt::format("{:7.1f}", us);
  return fmt::format("{:7.2f}", us);
}

std::string nccl_tests_table(Collective c, int ranks, const std::vector<Point>& points) {
  const double factor = *bus_factor(name_of(c), ranks);
  const bool reduces = c == Collective::all_reduce || c == Collective::reduce_scatter;
  std::string text =
      "#\n"
      "#                                                              out-of-place                       in-place          \n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
      "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       \n";
  double busbw_sum = 0.0;
  for (const Point& p : points) {
    const double us = p.predicted_s * 1e6;
    const double algbw = p.bytes / (p.predicted_s * 1e9);
    const double busbw = algbw * factor;
    busbw_sum += busbw;
    const std::string group = fmt::format("  {}  {:6.2f}  {:6.2f}  {:>5}", time_text(us), algbw, busbw, "0");
    text += fmt::format("{:12}  {:12}  {:>8}  {:>6}  {:6}{}{}\n", static_cast<std::int64_t>(p.bytes),
                        count_of(c, p.bytes, ranks), "float", reduces ? "sum" : "none",
                        c == Collective::broadcast ? 0 : -1, group, group);
  }
  text += "# Out of bounds values : 0 OK\n";
  text += fmt::format("# Avg bus bandwidth    : {:g} \n", points.empty() ? 0.0 : busbw_sum / points.size());
  return text;
}

void run(const CollectiveCliOptions& o) {
  const auto algorithm = parse_name<Algorithm>(o.algorithm);
  ClusterProfile profile = io::load_profile(o.profile);
  Collective collective = *parse_name<Collective>(o.collective);
  std::vector<Point> points;
  std::optional<io::NcclTestsLog> log;
  if (!o.log.empty()) {
    io::NcclTestsOptions options;
    if (given(o.o_collective)) options.collective = o.collective;
    if (given(o.o_nodes)) options.nodes = o.nodes;
    log = io::read_nccl_tests_file(o.log, options);
    const auto parsed = parse_name<Collective>(log->collective);
    if (!parsed) {
      throw InputError(o.log, "", fmt::format("dtperf does not predict {} (it predicts all_reduce, all_gather, "
                                              "reduce_scatter, alltoall, sendrecv and broadcast)", log->collective));
    }
    collective = *parsed;
    if (log->nodes < 1) throw InputError(o.log, "", "the log does not say how many nodes it spans").needing("nodes");
    profile.nodes = log->nodes;
    profile.gpus_per_node = log->ranks / log->nodes;
    for (const auto& [bytes, seconds] : io::bytes_and_time_s(*log, io::NcclTestsColumn::faster)) {
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
  const int ranks = profile.ranks();
  if (ranks < 2) throw InputError::in_input("nodes", "a collective needs at least 2 ranks (--nodes, --gpus-per-node)");
  const NetworkParams net = network_params(profile, 1.0, {});
  const GroupShape group{profile.nodes, profile.gpus_per_node, profile.gpus_per_node};
  for (Point& p : points) p.predicted_s = collective_cost(net, group, collective, p.bytes, *algorithm).time_s;

  const std::string where = fmt::format("{} on {} ranks ({} node{} x {}) of {}", name_of(collective), ranks,
                                        profile.nodes, profile.nodes == 1 ? "" : "s", profile.gpus_per_node,
                                        profile.name);
  io::Json rows = io::Json::array();
  for (const Point& p : points) {
    io::Json row = {{"bytes", p.bytes}, {"predicted_time_us", p.predicted_s * 1e6},
                    {"predicted_busbw_GB_per_s", p.bytes / (p.predicted_s * 1e9) * *bus_factor(name_of(collective), ranks)}};
    if (p.measured_s) {
      row["measured_time_us"] = *p.measured_s * 1e6;
      row["error"] = p.predicted_s / *p.measured_s - 1.0;
    }
    rows.push_back(row);
  }
  io::Json json = {{"schema", io::kReportSchema}, {"command", "collective"}, {"collective", name_of(collective)},
                   {"profile", profile.name}, {"ranks", ranks}, {"nodes", profile.nodes}, {"rows", rows}};
  std::string text;
  if (!log) {
    text = fmt::format("# dtperf collective: {}, predicted\n# collective: {}_perf\n# total_ranks: {}\n# nodes: {}\n", where,
                       name_of(collective), ranks, profile.nodes);
    text += nccl_tests_table(collective, ranks, points);
  } else {
    text = fmt::format("# dtperf collective: {}, measured in {} (the faster of out-of-place and in-place)\n", where, o.log);
    io::Table table({{"size", "B"}, {"measured", "us"}, {"predicted", "us"}, {"error", "%"}});
    double log_sum = 0.0;
    double worst = 0.0;
    int large = 0;
    for (const Point& p : points) {
      const double ratio = p.predicted_s / *p.measured_s;
      table.add_row({fmt::format("{}", static_cast<std::int64_t>(p.bytes)), io::fixed(*p.measured_s * 1e6, 2),
                     io::fixed(p.predicted_s * 1e6, 2), fmt::format("{:+.1f}", 100.0 * (ratio - 1.0))});
      if (p.bytes >= 1024.0 * 1024.0) {
        log_sum += std::abs(std::log(ratio));
        worst = std::max(worst, std::abs(ratio - 1.0));
        ++large;
      }
    }
    text += table.render();
    if (large > 0) {
      const double gmean = std::exp(log_sum / large) - 1.0;
      text += fmt::format("# sizes >= 1 MiB: geometric mean |error| {:.1f} %, worst {:.1f} %\n", 100.0 * gmean,
                          100.0 * worst);
      json["geometric_mean_abs_error_at_least_1MiB"] = gmean;
      json["max_abs_error_at_least_1MiB"] = worst;
    }
    json["log"] = o.log;
  }
  OutputOptions output;
  output.json = o.json;
  emit_report(output, text, json, "/rows");
}

}  // namespace

void add_collective_command(CLI::App& app) {
  auto o = std::make_shared<CollectiveCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "collective",
      "Predict one collective over a size range, printed as nccl-tests prints it; with --log, a measured nccl-tests\n"
      "log beside the prediction for its own collective, ranks and nodes.");
  o->o_collective = one_of<Collective>(cmd->add_option("-c,--collective", o->collective, "The collective"))
                        ->capture_default_str();
  cmd->add_option("-p,--profile", o->profile, "Cluster profile: a built-in name or a JSON file")->capture_default_str();
  one_of<Algorithm>(cmd->add_option("--algorithm", o->algorithm, "all_reduce algorithm (auto: as NCCL's tuner picks)"))
      ->capture_default_str();
  cmd->add_option("-b,--min-bytes", o->min_bytes, "Smallest size (nccl-tests -b; K, M, G suffixes)")
      ->transform(CLI::AsSizeValue(false))->check(CLI::Range(1.0, 1125899906842624.0))->capture_default_str();
  cmd->add_option("-e,--max-bytes", o->max_bytes, "Largest size (nccl-tests -e)")
      ->transform(CLI::AsSizeValue(false))->check(CLI::Range(1.0, 1125899906842624.0))->capture_default_str();
  cmd->add_option("-f,--step-factor", o->step_factor, "Size multiplier between rows (nccl-tests -f)")
      ->check(CLI::Range(2, 1024))->capture_default_str();
  o->o_nodes = cmd->add_option("--nodes", o->nodes, "Number of nodes")->type_name("N")->check(count_up_to(kMaxNodes));
  o->o_gpn = cmd->add_option("--gpus-per-node", o->gpus_per_node, "GPUs (ranks) per node")
                 ->type_name("G")->check(count_up_to(kMaxGpusPerNode));
  o->o_nics = cmd->add_option("--nics-per-node", o->nics_per_node, "NICs per node")
                  ->type_name("K")->check(count_up_to(kMaxGpusPerNode));
  o->o_nic = cmd->add_option("--nic-gbps", o->nic_gbps, "Line rate of one NIC")
                 ->type_name("GBIT/S")->check(number_in(0.0, kMaxGbps, true));
  o->o_eff = cmd->add_option("--transport-efficiency", o->transport_efficiency, "Achieved / line rate between nodes")
                 ->type_name("FRACTION")->check(number_in(1e-6, 1.0));
  o->o_lat = cmd->add_option("--inter-latency-us", o->inter_latency_us, "Latency per inter-node hop")
                 ->type_name("US")->check(number_in(0.0, kMaxLatencyUs));
  cmd->add_option("--log", o->log, "A measured nccl-tests log (text or -J JSON) to print beside the prediction")
      ->type_name("FILE");
  cmd->add_flag("--json", o->json, "Print JSON instead of the table");
  cmd->callback([o] { run(*o); });
}

}  // namespace dtperf::cli
