// The SVG charts of --plot: every series, label and bar is in the drawing, text is escaped.
#include <catch2/catch.hpp>

#include <string>

#include "dtperf/io/svg_chart.hpp"

using namespace dtperf::io;

namespace {

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("a line chart has its axes, a line and a legend entry per series, and decade ticks", "[svg]") {
  LineChart chart;
  chart.title = "ResNet-50 & friends";
  chart.x_label = "NIC rate (Gbit/s)";
  chart.y_label = "scaling factor (%)";
  chart.log_x = true;
  chart.series = {{"at line rate", {{1, 6.5}, {10, 45.4}, {100, 71.4}}}, {"at 95 %", {{1, 6.2}, {10, 43.8}, {100, 71.4}}}};
  const std::string svg = render_svg(chart);
  CHECK(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
  CHECK(svg.find("ResNet-50 &amp; friends") != std::string::npos);  // escaped
  CHECK(svg.find("NIC rate (Gbit/s)") != std::string::npos);
  CHECK(svg.find("scaling factor (%)") != std::string::npos);
  CHECK(svg.find(">at line rate<") != std::string::npos);
  CHECK(svg.find(">at 95 %<") != std::string::npos);
  // 6 points as circles; x ticks at 1, 10 and 100 on the log axis.
  CHECK(count(svg, "<circle") == 6);
  CHECK(svg.find(">1</text>") != std::string::npos);
  CHECK(svg.find(">10</text>") != std::string::npos);
  CHECK(svg.find(">100</text>") != std::string::npos);
  CHECK(svg.ends_with("</svg>\n"));
}

TEST_CASE("a bar chart has one bar and one label per entry, on a scale from zero", "[svg]") {
  BarChart chart;
  chart.title = "compare";
  chart.value_label = "iteration (ms)";
  chart.bars = {{"all-reduce", 50.12}, {"ring", 41.5}, {"alternating-exp-ring", 40.59}};
  const std::string svg = render_svg(chart);
  CHECK(count(svg, "<rect x=") == 3);
  CHECK(svg.find(">alternating-exp-ring<") != std::string::npos);
  CHECK(svg.find(">50.12<") != std::string::npos);
  CHECK(svg.find(">0</text>") != std::string::npos);  // the value axis starts at 0
}

TEST_CASE("a bar chart gives every bar a row of its own, so names and values never overlap", "[svg]") {
  BarChart chart;
  chart.value_label = "iteration (ms)";
  for (int i = 0; i < 18; ++i) chart.bars.emplace_back("scheme-with-a-long-name-" + std::to_string(i), 100.0 + i);
  const std::string svg = render_svg(chart);
  // 18 rows of 22 px under a 50 px title, 50 px of axis below: 50 + 396 + 50 = 496 px.
  CHECK(svg.find("height=\"496\"") != std::string::npos);
  // The left margin fits the longest name (26 characters at 7 px, plus 16): 198 px.
  CHECK(svg.find("<path d=\"M198 50 V446 H656\"") != std::string::npos);
  // Rows 22 px apart: the first two names' baselines at 50 + 4 + 11 = 65 and 87.
  CHECK(svg.find("<text x=\"192.0\" y=\"65.0\" text-anchor=\"end\">scheme-with-a-long-name-0<") != std::string::npos);
  CHECK(svg.find("<text x=\"192.0\" y=\"87.0\" text-anchor=\"end\">scheme-with-a-long-name-1<") != std::string::npos);
}
