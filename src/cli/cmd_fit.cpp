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
#include "dtperf/io/report.hpp"
#include "dtperf/io/table.hpp"
#include "dtperf/units.hpp"
#include "dtperf/io/calibrated_profile.hpp"
#include "invocation.hpp"
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
                       "neither a raw calibration file (\"schema\": \"dtperf.calibration/1\") nor nccl-tests -J output "
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
  return true;
}

std::string today_utc() {
  const auto days = std::chrono::floor<std::chrono::days>(std::chrono::system_clock::now());
  const std::chrono::year_month_day ymd{days};
  return fmt::format("{:04}-{:02}-{:02}", static_cast<int>(ymd.year()), static_cast<unsigned>(ymd.month()),
                     static_cast<unsigned>(ymd.day()));
}

io::Json fits_json(const io::FitOutcome& out) {
  io::Json fits = io::Json::array();
  for (std::size_t i = 0; i < out.series.size(); ++i) {
    const auto& s = out.series[i];
    const auto& f = out.fits[i];
    io::Json segments = io::Json::array();
    for (const auto& seg : f.fit.segments) {
      segments.push_back({{"min_bytes", seg.min_bytes},
                          {"max_bytes", seg.max_bytes},
                          {"alpha_us", seg.alpha_s / units::us},
                          {"busbw_GB_per_s", seg.bus_bytes_per_s / units::GB},
                          {"latency_only", latency_only(seg, f.bus_factor)}});
    }
    io::Json worst = io::Json::array();
    for (const auto& w : f.worst) worst.push_back({{"bytes", w.bytes}, {"relative_error", w.relative_error}});
    io::Json outliers = io::Json::array();
    for (const auto& r : f.residuals) {
      if (r.outlier) outliers.push_back({{"bytes", r.bytes}, {"time_us", r.time_s / units::us}});
    }
    fits.push_back({{"file", s.file},
                    {"collective", s.collective},
                    {"group", s.group},
                    {"ranks", s.ranks},
                    {"nodes", s.nodes},
                    {"concurrent_per_node", s.concurrent_per_node},
                    {"rms_relative_error", f.fit.rms_relative_error},
                    {"worst", worst},
                    {"outliers", outliers},
                    {"segments", segments}});
  }
  return fits;
}

// Two decimals, or three significant digits below 1 GB/s (small-size segments of slow links).
std::string busbw_text(double gb_per_s) {
  return gb_per_s >= 1.0 ? io::fixed(gb_per_s, 2) : fmt::format("{:.3g}", gb_per_s);
}

std::string fits_table(const io::FitOutcome& out) {
  io::Table table({{"collective", "", true}, {"group", "", true}, {"ranks", ""}, {"nodes", ""}, {"conc", ""}, {"seg", ""},
                   {"from", "", true}, {"to", "", true}, {"alpha", "us"}, {"busbw", "GB/s"}, {"rms", "%"},
                   {"worst", "%"}});
  bool any_latency_only = false;
  for (std::size_t i = 0; i < out.series.size(); ++i) {
    const auto& s = out.series[i];
    const auto& f = out.fits[i];
    const double worst = f.worst.empty() ? 0.0 : std::abs(f.worst.front().relative_error);
    for (std::size_t k = 0; k < f.fit.segments.size(); ++k) {
      const auto& seg = f.fit.segments[k];
      const bool flat = latency_only(seg, f.bus_factor);
      any_latency_only = any_latency_only || flat;
      table.add_row({s.collective, s.group, std::to_string(s.ranks), std::to_string(s.nodes),
                     std::to_string(s.concurrent_per_node), std::to_string(k + 1),
                     io::format_bytes(seg.min_bytes), io::format_bytes(seg.max_bytes), io::fixed(seg.alpha_s / units::us, 2),
                     flat ? "-" : busbw_text(seg.bus_bytes_per_s / units::GB),
                     io::percent(f.fit.rms_relative_error),
                     io::percent(worst)});
    }
  }
  std::string text = table.render();
  if (any_latency_only) text += "# busbw '-': the segment's time does not grow with its size (latency only).\n";
  return text;
}

// Every series fitted on every other size and predicted at the rest.
struct HoldoutRow {
  const io::MeasuredSeries* series;
  std::optional<HoldoutErrors> errors;
};

std::vector<HoldoutRow> holdout_rows(const io::FitOutcome& out) {
  std::vector<HoldoutRow> rows;
  for (const auto& s : out.series) rows.push_back({&s, holdout_errors(s.collective, s.ranks, s.nodes, s.points)});
  return rows;
}

std::string holdout_table(const std::vector<HoldoutRow>& rows) {
  io::Table table({{"input", "", true}, {"collective", "", true}, {"group", "", true}, {"ranks", ""}, {"nodes", ""},
                   {"fitted", "sizes"}, {"held-out", "sizes"}, {"gmean", "%"}, {"worst", "%"}, {"at", "", true},
                   {"gmean>=1MiB", "%"}, {"worst>=1MiB", "%"}});
  for (const auto& r : rows) {
    const auto& s = *r.series;
    const std::string name = s.file.substr(s.file.find_last_of('/') == std::string::npos ? 0 : s.file.find_last_of('/') + 1);
    if (!r.errors) {
      table.add_row({name, s.collective, s.group, std::to_string(s.ranks), std::to_string(s.nodes),
                     std::to_string(s.points.size()), "0", "-", "-", "-", "-", "-"});
      continue;
    }
    const auto& e = *r.errors;
    const bool large = e.large.points > 0;
    table.add_row({name, s.collective, s.group, std::to_string(s.ranks), std::to_string(s.nodes),
                   std::to_string(e.fitted), std::to_string(e.held_out.points), io::percent(e.held_out.geomean),
                   io::percent(e.held_out.worst), io::format_bytes(e.held_out.worst_bytes),
                   large ? io::percent(e.large.geomean) : "-", large ? io::percent(e.large.worst) : "-"});
  }
  return "# held-out error: each series fitted on every other size, the sizes between predicted\n" + table.render() +
         "# gmean: exp(mean |ln(predicted / measured)|) - 1; '-': fewer than 3 sizes, or none >= 1 MiB held out\n";
}

io::Json holdout_json(const std::vector<HoldoutRow>& rows) {
  io::Json out = io::Json::array();
  for (const auto& r : rows) {
    io::Json j = {{"file", r.series->file}, {"collective", r.series->collective}, {"group", r.series->group},
                  {"ranks", r.series->ranks}, {"nodes", r.series->nodes}};
    if (r.errors) {
      j["fitted_sizes"] = r.errors->fitted;
      j["held_out_sizes"] = r.errors->held_out.points;
      j["geomean_abs_error"] = r.errors->held_out.geomean;
      j["worst_abs_error"] = r.errors->held_out.worst;
      j["worst_bytes"] = r.errors->held_out.worst_bytes;
      if (r.errors->large.points > 0) {
        j["geomean_abs_error_at_least_1MiB"] = r.errors->large.geomean;
        j["worst_abs_error_at_least_1MiB"] = r.errors->large.worst;
      }
    }
    out.push_back(j);
  }
  return out;
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
  settings.created = !inputs.raws.empty() ? inputs.raws.front().second.created_date()
                     : !o.created.empty() ? o.created
                                          : today_utc();

  const io::FitOutcome out = io::build_calibrated_profile(inputs, settings);
  const io::Json profile_json = io::profile_to_json(out.profile);
  try {
    io::parse_profile(profile_json, o.output.empty() ? "the fitted profile" : o.output);
  } catch (const InputError& e) {
    throw std::logic_error(std::string("the fitted profile does not parse: ") + e.what());
  }
  if (!o.output.empty()) write_file_atomically(o.output, json_text(profile_json));
  const std::vector<HoldoutRow> held = o.holdout ? holdout_rows(out) : std::vector<HoldoutRow>{};

  if (o.json) {
    // With -o the report names the file; without, it carries the profile itself.
    std::cout << json_text({{"schema", io::kReportSchema},
                            {"command", "fit"},
                            {"profile", o.output.empty() ? profile_json : io::Json(o.output)},
                            {"name", out.profile.name},
                            {"fits", fits_json(out)},
                            {"holdout", o.holdout ? holdout_json(held) : io::Json(nullptr)},
                            {"notes", out.notes},
                            {"warnings", out.warnings},
                            {"invocation", invocation_json()}});
    return;
  }
  std::cout << fits_table(out) << "\n";
  if (o.holdout) std::cout << holdout_table(held) << "\n";
  for (const auto& note : out.notes) std::cout << "# " << note << "\n";
  for (const auto& warning : out.warnings) std::cout << "# warning: " << warning << "\n";
  if (!o.output.empty()) std::cout << fmt::format("# Wrote the profile '{}' to {}\n", out.profile.name, o.output);
}

}  // namespace

void add_fit_command(CLI::App& app) {
  auto o = std::make_shared<FitCliOptions>();
  CLI::App* cmd = app.add_subcommand(
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
                 ->check(number_in(0.0, kMaxGbps, true));
  o->o_nics = cmd->add_option("--nics-per-node", o->nics_per_node, "NICs per node carrying GPU traffic")
                  ->type_name("K")
                  ->check(count_up_to(kMaxGpusPerNode));
  o->o_ranks = cmd->add_option("--ranks", o->ranks, "Ranks of every nccl-tests log (overrides what the logs say; checked against busbw / algbw)")
                   ->type_name("N")
                   ->check(count_up_to(kMaxGpus));
  o->o_nodes = cmd->add_option("--nodes", o->nodes, "Nodes of every nccl-tests log (overrides what the logs say)")
                   ->type_name("M")
                   ->check(count_up_to(kMaxNodes));
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
  add_fit_runs_options(*cmd, o->runs);
  cmd->callback([o] { run(*o); });
}

}  // namespace dtperf::cli
