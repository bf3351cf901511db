// The --plot charts, drawn from the reports.
#include "dtperf/io/report_charts.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "dtperf/error.hpp"
#include "dtperf/io/svg_chart.hpp"

namespace dtperf::io {

std::string compare_chart(const CompareReport& r) {
  BarChart chart;
  chart.title = fmt::format("{} on {} x {} ({} GPUs): time per iteration", r.run.model.name, r.run.cluster.nodes,
                            r.run.cluster.name, r.run.cluster.ranks());
  chart.value_label = "iteration (ms)";
  for (const auto& outcome : r.outcomes) {
    if (outcome.available) chart.bars.emplace_back(outcome.scheme.name(), outcome.iteration.iteration_s * 1e3);
  }
  return render_svg(chart);
}

std::string whatif_chart(const WhatifReport& r) {
  LineChart chart;
  chart.title = fmt::format("{}, {} on {} x {} ({} GPUs)", r.run.model.name, r.scheme.name(), r.run.cluster.nodes,
                            r.run.cluster.name, r.run.cluster.ranks());
  chart.x_label = "inter-node rate per NIC (Gbit/s)";
  chart.y_label = "scaling factor (%)";
  chart.log_x = true;
  ChartSeries profile{fmt::format("at the profile's efficiency ({:g} %)", 100.0 * r.run.cluster.inter.transport_efficiency),
                      {}};
  ChartSeries line{"at line rate", {}};
  for (const RatePoint& p : r.rates) {
    profile.points.emplace_back(p.nic_gbps, 100.0 * p.at_profile.scaling_factor);
    line.points.emplace_back(p.nic_gbps, 100.0 * p.at_line_rate.scaling_factor);
  }
  chart.series = {profile, line};
  return render_svg(chart);
}

SweepChart::SweepChart(const SweepGrid& grid, std::string y) : grid_(grid), y_(std::move(y)) {
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

void SweepChart::add(const SweepRow& row) {
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

std::string SweepChart::render(const RunContext& run) const {
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

double SweepChart::x_value(const SweepPoint& p) const {
  if (x_ == "nodes") return p.nodes;
  if (x_ == "gpus-per-node") return p.gpus_per_node;
  if (x_ == "nic-gbps") return p.nic_gbps;
  if (x_ == "inter-latency-us") return p.inter_latency_us;
  if (x_ == "batch-per-gpu") return p.batch_per_gpu;
  if (x_ == "compression") return p.compression_ratio;
  return p.compute_cv;
}

std::string SweepChart::series_label(const SweepPoint& p) const {
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

}  // namespace dtperf::io
