// dtperf sweep: a grid of what-ifs for capacity planning. Every option of predict sets
// the base; each --vary NAME=VALUES turns one of them into an axis; every point of the
// product is predicted and streamed as JSON lines, CSV or a table, in constant memory,
// on all cores, in the same order whatever the thread count; --shard K/N evaluates every
// N-th point for a job array, and dtperf merge (cmd_merge.cpp) joins the shards.
#include <fmt/format.h>

#include <cstdint>
#include <deque>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <thread>

#include "analysis_options.hpp"
#include "checks.hpp"
#include "commands.hpp"
#include "dtperf/error.hpp"
#include "dtperf/io/model_files.hpp"
#include "dtperf/io/report_charts.hpp"
#include "dtperf/io/sweep_rows.hpp"
#include "dtperf/analysis/sweep.hpp"
#include "invocation.hpp"
#include "options.hpp"
#include "progress.hpp"
#include "output.hpp"
#include "sweep_axes.hpp"

namespace dtperf::cli {

namespace {

struct SweepOptions : AnalysisCliOptions {
  std::vector<std::string> vary;
  std::string format = "auto";
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  bool quiet = false;
  std::string plot_y = "iteration-ms";
  std::string shard;  // "K/N"
};

struct Shard {
  std::uint64_t index = 0;
  std::uint64_t count = 1;
};

constexpr std::uint64_t kMostShards = 1'000'000;

// "K/N" with 0 <= K < N <= kMostShards (a Slurm array's task id and size).
Shard parse_shard(const std::string& text) {
  const auto fail = [&](const std::string& why) {
    return InputError::in_input("shard", fmt::format("'{}': {}; expected K/N with 0 <= K < N, e.g. "
                                                       "$SLURM_ARRAY_TASK_ID/64",
                                                       text, why));
  };
  const std::size_t slash = text.find('/');
  if (slash == std::string::npos) throw fail("no '/'");
  const auto number = [&](const std::string& part) {
    if (part.empty() || part.size() > 7 || part.find_first_not_of("0123456789") != std::string::npos) {
      throw fail(fmt::format("'{}' is not a whole number up to {}", part, kMostShards));
    }
    return static_cast<std::uint64_t>(std::stoull(part));
  };
  Shard shard{number(text.substr(0, slash)), number(text.substr(slash + 1))};
  if (shard.count < 1 || shard.count > kMostShards) throw fail(fmt::format("N must be 1 to {}", kMostShards));
  if (shard.index >= shard.count) throw fail("K must be less than N");
  return shard;
}

// --json (as on every command) wins, then --format, then -o's extension.
io::RowFormat output_format(const SweepOptions& o) {
  if (o.output.json) return io::RowFormat::jsonl;
  if (o.format == "csv") return io::RowFormat::csv;
  if (o.format == "jsonl") return io::RowFormat::jsonl;
  if (o.format == "table") return io::RowFormat::table;
  const std::string& path = o.output.output_path;
  if (path.empty()) return io::RowFormat::table;
  if (path.ends_with(".csv")) return io::RowFormat::csv;
  if (path.ends_with(".jsonl") || path.ends_with(".json") || path.ends_with(".ndjson")) return io::RowFormat::jsonl;
  if (path.ends_with(".txt")) return io::RowFormat::table;
  throw InputError::in_input("output", fmt::format("'{}': the format follows the extension (.csv, .jsonl, .json or "
                                                   ".txt); give one, or --format",
                                                   path));
}

void run(SweepOptions& o) {
  if (o.output.output_path == kStdout) o.output.output_path.clear();  // -o -: the rows on stdout, as without -o
  const AxisSpecs specs = parse_axes(o.vary);
  const std::optional<Shard> shard = o.shard.empty() ? std::nullopt : std::optional<Shard>(parse_shard(o.shard));
  Session session = o.start("sweep");
  const Inputs& inputs = *session.inputs;
  std::deque<ModelSpec> models;  // stable addresses for the grid
  SweepAxes axes = specs.axes;
  for (const std::string& name : specs.models) {
    models.push_back(name == inputs.model.name || name == o.model.model ? inputs.model : io::load_model(name));
    axes.models.push_back(&models.back());
  }
  const io::RowFormat format = output_format(o);
  if (shard && format == io::RowFormat::table) {
    throw InputError::in_input("shard", "a shard is written as CSV or JSON lines (-o FILE.csv, -o FILE.jsonl or "
                                          "--format), which dtperf merge joins; a table cannot be merged");
  }
  if (shard && !o.output.plot_path.empty()) {
    throw InputError::in_input("shard", "--plot needs the whole grid: plot an unsharded run");
  }
  const SweepReport report = build_sweep_report(session.prepared, std::move(axes), specs.models, o.variability.law());
  const SweepGrid& grid = report.grid;
  const io::SweepWriter writer(format, grid);
  std::optional<io::SweepChart> plot;
  if (!o.output.plot_path.empty()) plot.emplace(grid, o.plot_y);

  // Both files are opened (as temporaries) before any work and committed together at the
  // end: a plot into a missing folder fails before the rows are written.
  std::optional<StreamedFile> file, plot_file;
  if (!o.output.output_path.empty()) file.emplace(o.output.output_path);
  if (plot) plot_file.emplace(o.output.plot_path);
  const auto write_out = [&](const std::string& text) {
    if (file) {
      file->write(text);
    } else {
      std::cout << text;
    }
  };

  std::string text = writer.header();
  if (format == io::RowFormat::jsonl) {
    io::Json header = io::sweep_header_json(report);
    // What the rows depend on: not where they went, how many threads made them or which
    // shard this is, so that merged shards are the file one run writes.
    header["invocation"] = invocation_json_without({"-o", "--output", "--shard", "--threads"}, {"--quiet"});
    if (shard) header["shard"] = {{"index", shard->index}, {"count", shard->count}};
    text = header.dump(-1, ' ', false, io::Json::error_handler_t::replace) + "\n";
  } else if (format == io::RowFormat::table) {
    text = io::sweep_header_text(report) + text;
  }
  write_out(text);

  Progress progress("sweep", o.quiet);
  SweepRun sweep;
  sweep.threads = o.threads;
  if (shard) {
    sweep.shard = shard->index;
    sweep.shards = shard->count;
  }
  sweep.render = [&](std::span<const SweepRow> rows, std::string& out) {
    for (const SweepRow& row : rows) writer.append(out, row);
  };
  sweep.sink = [&](std::span<const SweepRow> rows, const std::string& rendered) {
    if (plot) {
      for (const SweepRow& row : rows) plot->add(row);
    }
    write_out(rendered);
  };
  sweep.progress = [&](std::uint64_t done, std::uint64_t total) { progress.count(done, total); };
  run_sweep(grid, sweep);
  if (plot) plot_file->write(plot->render(report.run));
  if (file) file->commit();
  if (plot_file) plot_file->commit();
  if (file && !o.output.json) {
    if (shard) {
      std::cout << fmt::format("# shard {}/{}: {} of {} points written to {}\n", shard->index, shard->count,
                               shard_size(grid.size(), shard->index, shard->count), grid.size(),
                               o.output.output_path);
    } else {
      std::cout << fmt::format("# {} points written to {}\n", grid.size(), o.output.output_path);
    }
  }
}

}  // namespace

void add_sweep_command(CLI::App& app) {
  auto [cmd, options] = add_command<SweepOptions>(app, run,
      "sweep",
      "A grid of what-ifs for capacity planning: every option of predict sets the base, each --vary NAME=VALUES\n"
      "turns one into an axis (model, scheme, nodes, gpus-per-node, nic-gbps, inter-latency-us, batch-per-gpu,\n"
      "compression, compute-cv), and every point of the product is predicted. Rows stream as a table, JSON lines\n"
      "or CSV (-o FILE.csv), in the same order whatever the thread count.");
  options->add_to(*cmd);
  options->output.add_plot_to(*cmd);
  cmd->add_option("--vary", options->vary,
                  "An axis: NAME=VALUES, VALUES a comma list whose items may be ranges START:END[:STEP] or "
                  "START:END:xFACTOR (e.g. nodes=1:64:x2, nic-gbps=10,25,100, scheme=all)")
      ->type_name("NAME=VALUES")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->group("Sweep");
  cmd->add_option("--format", options->format, "Rows as a table, JSON lines or CSV (auto: from -o's extension; --json gives JSON lines whatever this says)")
      ->type_name("auto|table|jsonl|csv")
      ->check(CLI::IsMember({"auto", "table", "jsonl", "csv"}))
      ->capture_default_str()
      ->group("Sweep");
  cmd->add_option("--threads", options->threads, "Threads evaluating points (default: the cores)")
      ->type_name("N")
      ->transform(count_up_to(1024))
      ->group("Sweep");
  cmd->add_option("--plot-y", options->plot_y, "What --plot draws against the first numeric axis")
      ->type_name("iteration-ms|scaling|throughput")
      ->check(CLI::IsMember({"iteration-ms", "scaling", "throughput"}))
      ->capture_default_str()
      ->group("Sweep");
  cmd->add_option("--shard", options->shard,
                  "Evaluate shard K of N: the points whose index is K modulo N (e.g. $SLURM_ARRAY_TASK_ID/64); "
                  "dtperf merge joins the N files into the one an unsharded run writes")
      ->type_name("K/N")
      ->group("Sweep");
  cmd->add_flag("--quiet", options->quiet, "No progress lines on stderr (printed each second for grids that take longer)")
      ->group("Sweep");
}

}  // namespace dtperf::cli
