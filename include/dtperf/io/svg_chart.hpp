#pragma once
// Small self-contained SVG charts for reports (`--plot FILE.svg`): a line chart (one line
// per series, e.g. scaling factor against NIC rate) and a bar chart (one horizontal bar per scheme).
// Axes carry their labels with units, ticks at round values (decades on a log axis), and a
// legend names every series. No scripts, fonts or external references: any SVG viewer or
// rsvg-convert renders it. Pure: the SVG text is returned, the caller writes it.
#include <string>
#include <utility>
#include <vector>

namespace dtperf::io {

struct ChartSeries {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y), x increasing
};

struct LineChart {
  std::string title;
  std::string x_label;  // with its unit, e.g. "NIC rate (Gbit/s)"
  std::string y_label;
  bool log_x = false;   // x > 0 required
  double y_min = 0.0;   // the y axis starts here (a fraction of a whole: 0)
  std::vector<ChartSeries> series;
};

struct BarChart {
  std::string title;
  std::string value_label;  // with its unit, e.g. "iteration (ms)"
  std::vector<std::pair<std::string, double>> bars;  // (name, value >= 0), drawn top to bottom
};

std::string render_svg(const LineChart& chart);
std::string render_svg(const BarChart& chart);

}  // namespace dtperf::io
