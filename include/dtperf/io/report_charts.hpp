#pragma once
// The --plot charts of compare, whatif and sweep, drawn from their reports (svg_chart.hpp
// renders them).
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "dtperf/analysis/report.hpp"

namespace dtperf::io {

/// compare: one bar per scheme that applies, its time per iteration.
std::string compare_chart(const CompareReport& report);
/// whatif: the scaling factor against the NIC rate, at the profile's efficiency and at line rate.
std::string whatif_chart(const WhatifReport& report);

/// sweep: y (iteration-ms, scaling or throughput) against the first numeric axis the grid
/// varies, one line per combination of the other varied axes; rows are added as they
/// stream. InputError (input "plot") for a grid with no numeric axis of two values, over
/// kMaxPlotPoints points or more than kMaxPlotSeries lines.
class SweepChart {
 public:
  /// The most points a chart takes (each is kept until the chart is drawn), and lines.
  static constexpr std::uint64_t kMaxPlotPoints = 100'000;
  static constexpr std::size_t kMaxPlotSeries = 12;

  SweepChart(const SweepGrid& grid, std::string y);
  void add(const SweepRow& row);
  std::string render(const RunContext& run) const;

 private:
  double x_value(const SweepPoint& p) const;
  std::string series_label(const SweepPoint& p) const;

  const SweepGrid& grid_;
  std::string y_;
  std::string x_;
  std::vector<std::string> order_;
  std::map<std::string, std::vector<std::pair<double, double>>> series_;
};

}  // namespace dtperf::io
