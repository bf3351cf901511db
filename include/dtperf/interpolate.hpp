#pragma once
// Piecewise interpolation in measured points (x ascending), each axis on a linear or a
// log scale, clamped at both ends: a reduction's cost per size (linear), a collective's
// measured time per size (log-log), GEMM efficiency per FLOP count (log x, linear y).
#include <algorithm>
#include <cmath>
#include <span>
#include <utility>

namespace dtperf {

enum class Axis { linear, log };

/// y at x between the two points around it; the end value beyond either end. `points`
/// must not be empty.
inline double interpolate(std::span<const std::pair<double, double>> points, double x, Axis x_axis, Axis y_axis) {
  if (x <= points.front().first) return points.front().second;
  if (x >= points.back().first) return points.back().second;
  const auto upper = std::lower_bound(points.begin(), points.end(), x,
                                      [](const auto& point, double value) { return point.first < value; });
  const auto lower = upper - 1;
  const double fraction = x_axis == Axis::log ? std::log(x / lower->first) / std::log(upper->first / lower->first)
                                              : (x - lower->first) / (upper->first - lower->first);
  return y_axis == Axis::log ? std::exp(std::log(lower->second) + fraction * std::log(upper->second / lower->second))
                             : lower->second + fraction * (upper->second - lower->second);
}

}  // namespace dtperf
