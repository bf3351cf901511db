// dtperf fit: raw calibration files and nccl-tests logs -> a calibrated cluster profile;
// with --runs, measured training runs -> the model's parameters (cmd_fit_runs.cpp).
#include <chrono>
#include <iostream>

#include <fmt/format.h>

#include "cmd_fit_runs.hpp"
#include "checks.hpp"
#include "commands.hpp"
#include "dtperf/error.hpp"
#include "dtperf/io/profile_json.hpp"
#include "dtperf/io/calibrated_profile.hpp"
#include "invocation.hpp"
#include "options.hpp"
#include "output.hpp"

namespace dtperf::cli {

namespace {

struct FitCliOptions {
  std::vector<std::string> inputs;
  std::string base;
  std::string name;
  std::string created;
  std::string output;
  double nic_gbps = 0.0;
  int nics_per_node = 0;
  int ranks = 0;
  int nodes = 0;
  std::string collective;
  bool json = false;
  bool holdout = false;
  bool keep_degraded = false;
  FitRunsCliOptions runs;
  CLI::Option *o_nic{}, *o_nics{}, *o_ranks{}, *o_nodes{};
};

bool given(const CLI::Option* option) { return option != nullptr && option->count() > 0; }

// Raw calibration JSON, nccl-tests -J JSON or an nccl-tests text log, by content.
void read_input(const std::string& path, const io::NcclTestsOptions& log_options, io::FitInputs& inputs) {
  const std::string text = io::read_text_file(path);
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '{') {
    const io::Json json = io::parse_json_text(text, path);
    if (json.is_object() && json.contains("schema")) {
      inputs.raws.emplace_back(path, io::parse_calibration(json, path));
      return;
    }
    if (!json.is_object() || !json.contains("results")) {
      throw InputError(path, "(root)",
                       "neither a raw calibration file (\"schema\": \"dtperf.calibration/3\") nor nccl-tests -J output "
                       "(\"results\")");
    }
  }
  inputs.logs.emplace_back(path, io::parse_nccl_tests(text, path, log_options));
}

bool is_date(const std::string& s) {
  if (s.size() != 10 || s[4] != '-' || s[7] != '-') return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i != 4 && i != 7 && (s[i] < '0' || s[i] > '9')) return false;
  }
  // A day of the calendar: 2026-13-45 and 2026-02-30 are not.
  const std::chrono::year_month_day ymd{std::chrono::year{std::stoi(s.substr(0, 4))},
                                        std::chrono::month{static_cast<unsigned>(std::stoi(s.substr(5, 2)))},
                                        std::chrono::day{static_cast<unsigned>(std::stoi(s.substr(8, 2)))}};
  return ymd.ok();
}

std::string today_utc() {
  const auto days = std::chrono::floor<std::chrono::days>(std::chrono::system_clock::now());
  const std::chrono::year_month_day ymd{days};
  return fmt::format("{:04}-{:02}-{:02}", static_cast<int>(ymd.year()), static_cast<unsigned>(ymd.month()),
                     static_cast<unsigned>(ymd.day()));
}

void run(FitCliOptions& o) {
  if (!o.created.empty() && !is_date(o.created)) {
    throw InputError("--created", "", fmt::format("expected a date YYYY-MM-DD, got '{}'", o.created));
  }
  if (given(o.runs.given)) {
    for (const auto& [option, name] : {std::pair{o.o_nic, "--nic-gbps"}, {o.o_nics, "--nics-per-node"},
                                       {o.o_ranks, "--ranks"}, {o.o_nodes, "--nodes"}}) {
      if (given(option)) throw InputError(name, "", "is for calibration inputs; a runs file gives each run's cluster");
    }
    if (!o.inputs.empty()) {
      throw InputError(o.inputs.front(), "", "calibration inputs and --runs are fitted separately: give one or the other");
    }
    o.runs.name = o.name;
    run_fit_runs(o.runs, o.output, o.created.empty() ? today_utc() : o.created, o.json);
    return;
  }
  if (o.inputs.empty()) {
    throw InputError("dtperf fit", "", "nothing to fit: give calibration files or nccl-tests logs, or --runs FILE");
  }
  if (o.output.empty() && !o.json && !o.holdout) {
    throw InputError("--output", "", "fitting calibration inputs needs -o PROFILE.json, or --json to print the profile");
  }
  io::NcclTestsOptions log_options;
  if (given(o.o_ranks)) log_options.ranks = o.ranks;
  if (given(o.o_nodes)) log_options.nodes = o.nodes;
  if (!o.collective.empty()) log_options.collective = o.collective;
  io::FitInputs inputs;
  for (const auto& path : o.inputs) read_input(path, log_options, inputs);

  io::FitSettings settings;
  if (!o.base.empty()) {
    try {
      settings.base = io::load_profile(o.base);
    } catch (const InputError& e) {
      if (e.input() != "profile") throw;
      throw InputError::in_input("base", e.reason());
    }
  }
  settings.name = o.name;
  if (given(o.o_nic)) settings.nic_gbps = o.nic_gbps;
  if (given(o.o_nics)) settings.nics_per_node = o.nics_per_node;
  settings.keep_degraded = o.keep_degraded;
  settings.created = !inputs.raws.empty() ? inputs.raws.front().second.created_date()
                     : !o.created.empty() ? o.created
                                          : today_utc();

  const FitReport report = build_fit_report(io::build_calibrated_profile(inputs, settings), o.holdout, o.output);
  const io::Json profile_json = io::profile_to_json(report.fit.profile);
  try {
    io::parse_profile(profile_json, o.output.empty() ? "the fitted profile" : o.output);
  } catch (const InputError& e) {
    // Every measurement is inside its own range, yet what they fit to is not a machine a
    // profile can hold (a GEMM at 1e-16 TFLOP/s, a link whose times do not grow with the
    // size): the measurements are refused, naming the first and the fitted value.
    const std::string first = !inputs.raws.empty() ? inputs.raws.front().first : inputs.logs.front().first;
    const std::size_t count = inputs.raws.size() + inputs.logs.size();
    throw InputError(first, "", unphysical_fit(e, count));
  }
  emit_profile(o.output, json_text(profile_json), io::render(report), o.json);
}

}  // namespace

void add_fit_command(CLI::App& app) {
  auto [cmd, o] = add_command<FitCliOptions>(app, run,
      "fit",
      "Fit a cluster profile to measurements: raw calibration files (dtperf-calibrate) and/or nccl-tests logs "
      "(text or -J JSON, told apart by content); or, with --runs, fit the model to measured training runs.");
  cmd->add_option("inputs", o->inputs, "Raw calibration JSON files and nccl-tests logs")->type_name("INPUT");
  cmd->add_option("-o,--output", o->output,
                  "Where to write the profile (written whole or not at all; for calibration inputs, required "
                  "unless --json prints the profile in the report)")
      ->type_name("PROFILE.json")
      ->check(CLI::Validator([](const std::string& path) {
        return path.ends_with(".csv") ? std::string("a profile is JSON; give a .json file") : std::string();
      }, "PROFILE.json"));
  cmd->add_option("--base", o->base, "Profile for what was not measured (GPU peaks, link rates): a built-in name or a file")
      ->type_name("PROFILE");
  cmd->add_option("--name", o->name, "Name of the new profile (default: BASE-calibrated, or 'calibrated')");
  o->o_nic = cmd->add_option("--nic-gbps", o->nic_gbps, "Line rate of one NIC: makes transport efficiency = measured / line rate")
                 ->type_name("GBIT/S")
                 ->check(number_in(limits::kNicGbps));
  o->o_nics = cmd->add_option("--nics-per-node", o->nics_per_node, "NICs per node carrying GPU traffic")
                  ->type_name("K")
                  ->transform(count_up_to(kMaxGpusPerNode));
  o->o_ranks = cmd->add_option("--ranks", o->ranks, "Ranks of every nccl-tests log (overrides what the logs say; checked against busbw / algbw)")
                   ->type_name("N")
                   ->transform(count_up_to(kMaxGpus));
  o->o_nodes = cmd->add_option("--nodes", o->nodes, "Nodes of every nccl-tests log (overrides what the logs say)")
                   ->type_name("M")
                   ->transform(count_up_to(kMaxNodes));
  cmd->add_option("--collective", o->collective,
                  "Collective of every nccl-tests log, where the log does not say (nccl-tests prints no program name)")
      ->type_name("all_reduce|all_gather|reduce_scatter|alltoall|sendrecv")
      ->check(CLI::IsMember({"all_reduce", "all_gather", "reduce_scatter", "alltoall", "sendrecv", "all_reduce_perf",
                             "all_gather_perf", "reduce_scatter_perf", "alltoall_perf", "sendrecv_perf"}));
  cmd->add_option("--created", o->created, "Date of the profile when no raw calibration file gives one (default: today)")
      ->type_name("YYYY-MM-DD");
  cmd->add_flag("--json", o->json, "Print the fits as JSON instead of a table");
  cmd->add_flag("--holdout", o->holdout,
                "Also fit every series on every other size and report the error at the sizes between "
                "(how far to trust the fit); -o is then optional");
  cmd->add_flag("--keep-degraded", o->keep_degraded,
                "Fit a link level even where it measured far below the hardware (sockets instead of RDMA, P2P "
                "off); by default such a level is not fitted and the base's values stay (host-backend files are always "
                "fitted)");
  add_fit_runs_options(*cmd, o->runs);
}

}  // namespace dtperf::cli
