// dtperf whatif: network what-ifs for one configuration, as [NET] asks them. The scaling
// factor and NIC utilisation across inter-node rates (at the profile's transport
// efficiency and at line rate); the least rate and the least gradient compression that
// reach each target scaling factor; for a decentralized scheme, the least node count at
// which it beats All-Reduce.
#include <fmt/format.h>

#include <algorithm>

#include "analysis_options.hpp"
#include "checks.hpp"
#include "commands.hpp"
#include "dtperf/error.hpp"
#include "dtperf/io/report.hpp"
#include "dtperf/io/svg_chart.hpp"
#include "dtperf/io/table.hpp"
#include "dtperf/analysis/whatif.hpp"
#include "options.hpp"
#include "output.hpp"
#include "summary.hpp"

namespace dtperf::cli {

namespace {

struct WhatifOptions : AnalysisCliOptions {
  std::string scheme = "all-reduce";
  std::vector<double> rates_gbps{std::begin(kDefaultRatesGbps), std::end(kDefaultRatesGbps)};
  std::vector<double> targets{0.95, 0.99};
  double codec_ns_per_byte = 0.0;
  int max_nodes = 1024;
};

io::Json optional_json(const std::optional<double>& value) { return value ? io::Json(*value) : io::Json(nullptr); }

void run(WhatifOptions& o) {
  o.resolve();
  const auto scheme = parse_scheme(o.scheme);
  if (!scheme) throw InputError::in_input("scheme", fmt::format("unknown scheme '{}'", o.scheme));
  const Loaded loaded = load_inputs(o.model);
  std::optional<AnchorResult> anchored;
  Evaluator evaluator = o.make_evaluator(loaded, anchored);
  const SchemeOutcome here = evaluator.evaluate(*scheme);
  if (!here.available) throw InputError::in_input("scheme", here.unavailable_reason);
  const double codec_s_per_byte = o.codec_ns_per_byte * 1e-9;

  const std::vector<RatePoint> points = scaling_by_rate(evaluator, *scheme, o.rates_gbps);
  io::Table table({{"NIC-rate", "Gbit/s"},
                   {"scaling", "%"},
                   {"NIC-util", "%"},
                   {"iteration", "ms"},
                   {"line:scaling", "%"},
                   {"line:NIC-util", "%"},
                   {"line:iteration", "ms"}});
  io::Json rates = io::Json::array();
  for (const RatePoint& p : points) {
    table.add_row({io::fixed(p.nic_gbps, 1), io::percent(p.at_profile.scaling_factor),
                   io::percent(p.at_profile.nic_utilization), io::fixed(p.at_profile.iteration_s * 1e3, 2),
                   io::percent(p.at_line_rate.scaling_factor), io::percent(p.at_line_rate.nic_utilization),
                   io::fixed(p.at_line_rate.iteration_s * 1e3, 2)});
    rates.push_back({{"nic_gbps", p.nic_gbps},
                     {"at_profile_efficiency", io::iteration_json(p.at_profile)},
                     {"at_line_rate", io::iteration_json(p.at_line_rate)}});
  }

  const Setup& setup = evaluator.setup();
  io::Table solved({{"target", "%"}, {"NIC-rate", "Gbit/s"}, {"line:NIC-rate", "Gbit/s"}, {"compression", "x"}});
  io::Json targets = io::Json::array();
  double max_rate_scaling = 0.0;
  double max_compression_scaling = 0.0;
  bool unreachable = false;
  const auto cell = [&](const Solved& s, int decimals) {
    unreachable = unreachable || !s.value;
    return s.value ? io::fixed(*s.value, decimals) : std::string("-");
  };
  for (const double target : o.targets) {
    const Solved rate = least_rate_gbps(evaluator, *scheme, target, false);
    const Solved line = least_rate_gbps(evaluator, *scheme, target, true);
    const Solved compression = least_compression(setup, *scheme, target, codec_s_per_byte);
    max_rate_scaling = std::max(rate.best_scaling, line.best_scaling);
    max_compression_scaling = compression.best_scaling;
    solved.add_row({io::percent(target), cell(rate, 1), cell(line, 1), cell(compression, 2)});
    targets.push_back({{"scaling_factor", target},
                       {"least_nic_gbps", optional_json(rate.value)},
                       {"least_nic_gbps_line_rate", optional_json(line.value)},
                       {"least_compression_ratio", optional_json(compression.value)},
                       {"max_scaling_factor_any_rate", rate.best_scaling},
                       {"max_scaling_factor_any_compression", compression.best_scaling}});
  }
  std::string solutions = solved.render();
  if (unreachable) {
    solutions += fmt::format(
        "# -: not reached; the scaling factor is at most {} % at any rate and {} % at any compression: compute and "
        "fixed overheads bound it\n",
        io::percent(max_rate_scaling), io::percent(max_compression_scaling));
  }

  const ComputeRequest request = compute_request(loaded.model, o.model.workload, loaded.profile.ranks());
  io::Json json = run_json("whatif", loaded, request, o.model, anchored, evaluator.setup().variability);
  json["scheme"] = scheme->name();
  json["codec_ns_per_byte"] = o.codec_ns_per_byte;
  json["result"] = io::iteration_json(here.iteration);
  json["rates"] = rates;
  json["targets"] = targets;

  std::string text = run_header("whatif", loaded, request, o.model, anchored);
  text += fmt::format("# scheme: {}; here: {} % scaling at {} Gbit/s per NIC\n", scheme->name(),
                      io::percent(here.iteration.scaling_factor), io::fixed(setup.cluster.inter.nic_gbps, 1));
  text += table.render();
  text += fmt::format("\n# the least NIC rate (at the profile's efficiency and at line rate) and the least compression (at "
                      "{} Gbit/s{}) that reach each target\n",
                      io::fixed(setup.cluster.inter.nic_gbps, 1),
                      o.codec_ns_per_byte > 0 ? fmt::format(", codec {} ns per gradient byte", o.codec_ns_per_byte) : "");
  text += solutions;

  if (scheme->kind != Scheme::Kind::allreduce) {
    const NodesToWin win = least_nodes_to_win(evaluator, *scheme, o.max_nodes);
    json["nodes_to_win"] = {{"max_nodes", o.max_nodes},
                            {"nodes", win.nodes ? io::Json(*win.nodes) : io::Json(nullptr)},
                            {"speedup", win.speedup}};
    text += win.nodes ? fmt::format("# {} beats all-reduce from {} nodes on ({:.3f}x there)\n", scheme->name(),
                                    *win.nodes, win.speedup)
                      : fmt::format("# {} does not beat all-reduce on up to {} nodes\n", scheme->name(), o.max_nodes);
  }
  emit_report(o.output, text, json, "/rates");
  if (!o.output.plot_path.empty()) {
    io::LineChart chart;
    chart.title = fmt::format("{}, {} on {} x {} ({} GPUs)", loaded.model.name, scheme->name(), loaded.profile.nodes,
                              loaded.profile.name, loaded.profile.ranks());
    chart.x_label = "inter-node rate per NIC (Gbit/s)";
    chart.y_label = "scaling factor (%)";
    chart.log_x = true;
    io::ChartSeries profile{fmt::format("at the profile's efficiency ({:g} %)",
                                        100.0 * setup.cluster.inter.transport_efficiency), {}};
    io::ChartSeries line{"at line rate", {}};
    for (const RatePoint& p : points) {
      profile.points.emplace_back(p.nic_gbps, 100.0 * p.at_profile.scaling_factor);
      line.points.emplace_back(p.nic_gbps, 100.0 * p.at_line_rate.scaling_factor);
    }
    chart.series = {profile, line};
    write_file_atomically(o.output.plot_path, io::render_svg(chart));
  }
}

}  // namespace

void add_whatif_command(CLI::App& app) {
  auto options = std::make_shared<WhatifOptions>();
  CLI::App* cmd = app.add_subcommand(
      "whatif",
      "Network what-ifs: scaling factor and NIC utilization across inter-node rates (at the profile's transport\n"
      "efficiency and at line rate), the least rate and compression that reach a target scaling factor, and for a\n"
      "decentralized scheme the least node count where it beats All-Reduce.");
  cmd->add_option("-s,--scheme", options->scheme, "all-reduce, sgp, sgp-sync, d-psgd, zero-1, zero-2, fsdp (zero-3), hsdp, local-sgd, diloco, or a gossip topology (dtperf topologies)")
      ->type_name("SCHEME")->capture_default_str();
  cmd->add_option("--rates", options->rates_gbps, "Inter-node rates per NIC to tabulate")
      ->type_name("GBPS...")->delimiter(',')->check(number_in(kMinRateGbps, kMaxRateGbps))->capture_default_str();
  cmd->add_option("--target", options->targets, "Scaling factors to solve for")
      ->type_name("FRACTION...")->delimiter(',')->check(number_in(0.0, 1.0, true))->capture_default_str();
  cmd->add_option("--codec-ns-per-byte", options->codec_ns_per_byte,
                  "Compression codec cost (encode + decode) per gradient byte, on the critical path")
      ->type_name("NS")->check(number_in(0.0, 1e6))->capture_default_str();
  cmd->add_option("--max-nodes", options->max_nodes, "Largest node count searched for a decentralized win")
      ->type_name("N")->check(count_up_to(kMaxNodes))->capture_default_str();
  options->add_to(*cmd);
  options->output.add_plot_to(*cmd);
  cmd->callback([options] { run(*options); });
}

}  // namespace dtperf::cli
