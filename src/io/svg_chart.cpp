#include "dtperf/io/svg_chart.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace dtperf::io {

namespace {

constexpr double kWidth = 720, kHeight = 440;
constexpr double kLeft = 80, kRight = 30, kTop = 50, kBottom = 70;
constexpr const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
                                   "#7f7f7f", "#bcbd22", "#17becf"};

std::string escaped(const std::string& text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string label(double v) { return fmt::format("{:g}", v); }

// Round tick values from low to high: steps of 1, 2 or 5 x a power of ten, 4 to 10 of them.
std::vector<double> linear_ticks(double low, double high) {
  const double span = std::max(high - low, 1e-12);
  const double raw = span / 6.0;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  double step = power;
  for (const double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * power >= raw) {
      step = m * power;
      break;
    }
  }
  std::vector<double> ticks;
  for (double t = std::ceil(low / step) * step; t <= high + step * 1e-9; t += step) ticks.push_back(t);
  return ticks;
}

std::string frame(const std::string& title, const std::string& body, double height = kHeight) {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{2}\" y=\"28\" text-anchor=\"middle\" font-size=\"15\">{3}</text>\n{4}</svg>\n",
      kWidth, height, kWidth / 2, escaped(title), body);
}

std::string axes(const std::string& x_label, const std::string& y_label) {
  const double x0 = kLeft, y0 = kHeight - kBottom, x1 = kWidth - kRight, y1 = kTop;
  return fmt::format(
      "<path d=\"M{0} {1} V{2} M{0} {2} H{3}\" stroke=\"black\" fill=\"none\"/>\n"
      "<text x=\"{4}\" y=\"{5}\" text-anchor=\"middle\">{6}</text>\n"
      "<text x=\"20\" y=\"{7}\" text-anchor=\"middle\" transform=\"rotate(-90 20 {7})\">{8}</text>\n",
      x0, y1, y0, x1, (x0 + x1) / 2, kHeight - 25, escaped(x_label), (y0 + y1) / 2, escaped(y_label));
}

}  // namespace

std::string render_svg(const LineChart& chart) {
  double x_low = INFINITY, x_high = -INFINITY, y_high = chart.y_min;
  for (const auto& s : chart.series) {
    for (const auto& [x, y] : s.points) {
      if (chart.log_x && !(x > 0)) continue;
      x_low = std::min(x_low, x);
      x_high = std::max(x_high, x);
      y_high = std::max(y_high, y);
    }
  }
  if (!(x_low < x_high)) {
    x_low = chart.log_x ? 1.0 : 0.0;
    x_high = chart.log_x ? 10.0 : 1.0;
  }
  if (!(y_high > chart.y_min)) y_high = chart.y_min + 1.0;
  const std::vector<double> y_ticks = linear_ticks(chart.y_min, y_high);
  y_high = std::max(y_high, y_ticks.back());
  const double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - kTop - kBottom;
  const auto fx = [&](double x) {
    const double f = chart.log_x ? std::log(x / x_low) / std::log(x_high / x_low) : (x - x_low) / (x_high - x_low);
    return kLeft + f * plot_w;
  };
  const auto fy = [&](double y) { return kHeight - kBottom - (y - chart.y_min) / (y_high - chart.y_min) * plot_h; };

  std::string body = axes(chart.x_label, chart.y_label);
  for (const double t : y_ticks) {
    body += fmt::format(
        "<path d=\"M{0} {1:.1f} H{2}\" stroke=\"#ddd\"/><text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>\n",
        kLeft, fy(t), kWidth - kRight, kLeft - 6, fy(t) + 4, label(t));
  }
  std::vector<double> x_ticks;
  if (chart.log_x) {
    for (double t = std::pow(10.0, std::ceil(std::log10(x_low) - 1e-9)); t <= x_high * (1 + 1e-9); t *= 10) x_ticks.push_back(t);
  } else {
    x_ticks = linear_ticks(x_low, x_high);
  }
  for (const double t : x_ticks) {
    body += fmt::format("<path d=\"M{0:.1f} {1} V{2}\" stroke=\"#ddd\"/><text x=\"{0:.1f}\" y=\"{3}\" "
                        "text-anchor=\"middle\">{4}</text>\n",
                        fx(t), kTop, kHeight - kBottom, kHeight - kBottom + 18, label(t));
  }
  for (std::size_t i = 0; i < chart.series.size(); ++i) {
    const auto& s = chart.series[i];
    const char* color = kColors[i % std::size(kColors)];
    std::string path;
    for (const auto& [x, y] : s.points) {
      if (chart.log_x && !(x > 0)) continue;
      path += fmt::format("{}{:.1f} {:.1f} ", path.empty() ? "M" : "L", fx(x), fy(y));
      body += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\"/>\n", fx(x), fy(y), color);
    }
    body += fmt::format("<path d=\"{}\" stroke=\"{}\" stroke-width=\"2\" fill=\"none\"/>\n", path, color);
    const double ly = kTop + 14 + 18.0 * i;
    body += fmt::format("<path d=\"M{0} {1} h24\" stroke=\"{2}\" stroke-width=\"3\"/><text x=\"{3}\" y=\"{4}\">{5}</text>\n",
                        kLeft + 14, ly, color, kLeft + 44, ly + 4, escaped(s.name));
  }
  return frame(chart.title, body);
}

// Horizontal bars, one row each, names at the left and values at the bars' ends: a name
// or a value never runs into its neighbour's however many bars there are (upright bars
// with 18 schemes put 40-pixel values over 34-pixel slots). The drawing grows a row at a
// time; the left margin fits the longest name.
std::string render_svg(const BarChart& chart) {
  constexpr double kRow = 22, kBar = 14, kCharWidth = 7.0;  // px; 7 px bounds a 12 px sans glyph
  constexpr double kValueRoom = 64, kAxisRoom = 50;        // a value right of its bar; ticks and title
  double x_high = 0.0;
  std::size_t longest = 0;
  for (const auto& [name, value] : chart.bars) {
    x_high = std::max(x_high, value);
    longest = std::max(longest, name.size());
  }
  if (!(x_high > 0)) x_high = 1.0;
  const std::vector<double> x_ticks = linear_ticks(0.0, x_high);
  x_high = std::max(x_high, x_ticks.back());
  const double left = std::max(kLeft, 16 + kCharWidth * static_cast<double>(longest));
  const double right = kWidth - kValueRoom;
  const double rows = static_cast<double>(std::max<std::size_t>(1, chart.bars.size()));
  const double bottom = kTop + rows * kRow;
  const double height = bottom + kAxisRoom;
  const auto fx = [&](double x) { return left + x / x_high * (right - left); };

  std::string body = fmt::format(
      "<path d=\"M{0} {1} V{2} H{3}\" stroke=\"black\" fill=\"none\"/>\n"
      "<text x=\"{4}\" y=\"{5}\" text-anchor=\"middle\">{6}</text>\n",
      left, kTop, bottom, right, (left + right) / 2, height - 12, escaped(chart.value_label));
  for (const double t : x_ticks) {
    body += fmt::format("<path d=\"M{0:.1f} {1} V{2}\" stroke=\"#ddd\"/><text x=\"{0:.1f}\" y=\"{3}\" "
                        "text-anchor=\"middle\">{4}</text>\n",
                        fx(t), kTop, bottom, bottom + 16, label(t));
  }
  for (std::size_t i = 0; i < chart.bars.size(); ++i) {
    const auto& [name, value] = chart.bars[i];
    const double y = kTop + kRow * static_cast<double>(i) + (kRow - kBar) / 2;
    body += fmt::format(
        "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n"
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\"/>\n"
        "<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n",
        left - 6, y + kBar - 3, escaped(name), left, y, fx(value) - left, kBar, kColors[i % std::size(kColors)],
        fx(value) + 4, y + kBar - 3, label(std::round(value * 100) / 100));
  }
  return frame(chart.title, body, height);
}

}  // namespace dtperf::io
