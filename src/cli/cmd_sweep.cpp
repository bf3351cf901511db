// dtperf sweep: a grid of what-ifs for capacity planning. Every option of predict sets
// the base; each --vary NAME=VALUES turns one of them into an axis; every point of the
// product is predicted and streamed as JSON lines, CSV or a table, in constant memory,
// on all cores, in the same order whatever the thread count.
#include <fmt/format.h>

#include <cstdint>
#include <deque>
#include <iostream>
#include <map>
#include <thread>

#include "analysis_options.hpp"
#include "checks.hpp"
#include "commands.hpp"
#include "dtperf/error.hpp"
#include "dtperf/io/model_files.hpp"
#include "dtperf/io/svg_chart.hpp"
#include "dtperf/io/sweep_rows.hpp"
#include "dtperf/analysis/sweep.hpp"
#include "invocation.hpp"
#include "options.hpp"
#include "progress.hpp"
#include "output.hpp"
#include "sweep_axes.hpp"

namespace dtperf::cli {

namespace {

/// The most points a chart takes (each is kept until the chart is drawn).
constexpr std::uint64_t kMaxPlotPoints = 100'000;
constexpr std::size_t kMaxPlotSeries = 12;

struct SweepOptions : AnalysisCliOptions {
  std::vector<std::string> vary;
  std::string format = "auto";
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  bool quiet = false;
  std::string plot_y = "iteration-ms";
};

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

// The chart: y against the first numeric axis the grid varies, one line per combination
// of the other varied axes.
class SweepPlot {
 public:
  SweepPlot(const SweepGrid& grid, std::string y) : grid_(grid), y_(std::move(y)) {
    const SweepAxes& a = grid.axes();
    const std::pair<const char*, std::size_t> numeric[] = {
        {"nodes", a.nodes.size()},        {"gpus-per-node", a.gpus_per_node.size()},
        {"nic-gbps", a.nic_gbps.size()},  {"inter-latency-us", a.inter_latency_us.size()},
        {"batch-per-gpu", a.batch_per_gpu.size()}, {"compression", a.compression_ratio.size()},
        {"compute-cv", a.compute_cv.size()}};
    for (const auto& [name, size] : numeric) {
      if (size > 1) {
        x_ = name;
        break;
      }
    }
    if (x_.empty()) {
      throw InputError::in_input("plot", "the chart needs a numeric axis with two values or more (e.g. --vary nodes=1:64:x2)");
    }
    if (grid.size() > kMaxPlotPoints) {
      throw InputError::in_input("plot", fmt::format("{} points are too many to draw (at most {}); sweep fewer, or write "
                                                     "the rows and plot them elsewhere",
                                                     grid.size(), kMaxPlotPoints));
    }
  }

  void add(const SweepRow& row) {
    if (!row.available) return;
    const SweepPoint& p = row.point;
    const double x = x_value(p);
    const double y = y_ == "scaling" ? row.iteration.scaling_factor * 100.0
                     : y_ == "throughput" ? row.iteration.throughput_samples_per_s
                                          : row.iteration.iteration_s * 1e3;
    const std::string label = series_label(p);
    auto it = series_.find(label);
    if (it == series_.end()) {
      if (series_.size() == kMaxPlotSeries) {
        throw InputError::in_input("plot", fmt::format("more than {} lines (one per combination of the axes other than "
                                                       "{}); vary fewer axes",
                                                       kMaxPlotSeries, x_));
      }
      order_.push_back(label);
      it = series_.emplace(label, std::vector<std::pair<double, double>>{}).first;
    }
    it->second.emplace_back(x, y);
  }

  std::string render(const RunContext& run) const {
    io::LineChart chart;
    const std::string unit = x_ == "nic-gbps" ? " (Gbit/s)" : x_ == "inter-latency-us" ? " (us)" : "";
    chart.x_label = fmt::format("{}{}", x_, unit);
    chart.y_label = y_ == "scaling" ? "scaling factor (%)" : y_ == "throughput" ? "throughput (samples/s)" : "iteration (ms)";
    chart.title = fmt::format("{} on {}: sweep of {}", run.model.name, run.cluster.name, x_);
    double low = 0.0;
    for (const std::string& label : order_) {
      io::ChartSeries series{label, series_.at(label)};
      std::sort(series.points.begin(), series.points.end());
      for (const auto& point : series.points) low = low == 0.0 ? point.first : std::min(low, point.first);
      chart.series.push_back(std::move(series));
    }
    const std::string_view x = x_;
    chart.log_x = low > 0.0 && (x == "nodes" || x == "gpus-per-node" || x == "nic-gbps" || x == "compression");
    return io::render_svg(chart);
  }

 private:
  double x_value(const SweepPoint& p) const {
    if (x_ == "nodes") return p.nodes;
    if (x_ == "gpus-per-node") return p.gpus_per_node;
    if (x_ == "nic-gbps") return p.nic_gbps;
    if (x_ == "inter-latency-us") return p.inter_latency_us;
    if (x_ == "batch-per-gpu") return p.batch_per_gpu;
    if (x_ == "compression") return p.compression_ratio;
    return p.compute_cv;
  }

  std::string series_label(const SweepPoint& p) const {
    const SweepAxes& a = grid_.axes();
    std::string label;
    const auto add = [&](bool varied, const std::string& text) {
      if (!varied) return;
      if (!label.empty()) label += ", ";
      label += text;
    };
    add(a.models.size() > 1, p.model->name);
    add(a.schemes.size() > 1, p.scheme->name());
    add(a.nodes.size() > 1 && x_ != "nodes", fmt::format("{} nodes", p.nodes));
    add(a.gpus_per_node.size() > 1 && x_ != "gpus-per-node", fmt::format("{} GPUs/node", p.gpus_per_node));
    add(a.nic_gbps.size() > 1 && x_ != "nic-gbps", fmt::format("{:g} Gbit/s", p.nic_gbps));
    add(a.inter_latency_us.size() > 1 && x_ != "inter-latency-us", fmt::format("{:g} us", p.inter_latency_us));
    add(a.batch_per_gpu.size() > 1 && x_ != "batch-per-gpu", fmt::format("batch {:g}", p.batch_per_gpu));
    add(a.compression_ratio.size() > 1 && x_ != "compression", fmt::format("{:g}x", p.compression_ratio));
    add(a.compute_cv.size() > 1 && x_ != "compute-cv", fmt::format("CV {:g}", p.compute_cv));
    return label.empty() ? p.scheme->name() : label;
  }

  const SweepGrid& grid_;
  std::string y_;
  std::string x_;
  std::vector<std::string> order_;
  std::map<std::string, std::vector<std::pair<double, double>>> series_;
};

void run(SweepOptions& o) {
  const AxisSpecs specs = parse_axes(o.vary);
  Session session = o.start("sweep");
  const Inputs& inputs = *session.inputs;
  std::deque<ModelSpec> models;  // stable addresses for the grid
  SweepAxes axes = specs.axes;
  for (const std::string& name : specs.models) {
    models.push_back(name == inputs.model.name || name == o.model.model ? inputs.model : io::load_model(name));
    axes.models.push_back(&models.back());
  }
  const io::RowFormat format = output_format(o);
  const SweepReport report = build_sweep_report(session.prepared, std::move(axes), specs.models, o.variability.law());
  const SweepGrid& grid = report.grid;
  const io::SweepWriter writer(format, grid);
  std::optional<SweepPlot> plot;
  if (!o.output.plot_path.empty()) plot.emplace(grid, o.plot_y);

  std::optional<StreamedFile> file;
  if (!o.output.output_path.empty()) file.emplace(o.output.output_path);
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
    header["invocation"] = invocation_json();
    text = header.dump() + "\n";
  } else if (format == io::RowFormat::table) {
    text = io::sweep_header_text(report) + text;
  }
  write_out(text);

  Progress progress("sweep", o.quiet);
  SweepRun sweep;
  sweep.threads = o.threads;
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
  if (file) file->commit();
  if (plot) write_file_atomically(o.output.plot_path, plot->render(report.run));
  if (file && !o.output.json) {
    std::cout << fmt::format("# {} points written to {}\n", grid.size(), o.output.output_path);
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
      ->check(count_up_to(1024))
      ->group("Sweep");
  cmd->add_option("--plot-y", options->plot_y, "What --plot draws against the first numeric axis")
      ->type_name("iteration-ms|scaling|throughput")
      ->check(CLI::IsMember({"iteration-ms", "scaling", "throughput"}))
      ->capture_default_str()
      ->group("Sweep");
  cmd->add_flag("--quiet", options->quiet, "No progress lines on stderr (printed each second for grids that take longer)")
      ->group("Sweep");
}

}  // namespace dtperf::cli
