#pragma once
// Where a quantity changes sign along one variable: the bracketing search that advise's
// break-even compute CV and NIC rate use.
//
// Each evaluation there is two simulations of every rank for hundreds of iterations, so
// the count of evaluations is the cost. Bisection halves the bracket per evaluation (14
// evaluations from a bracket of width 1 to 1e-4) whatever the quantity. The ITP method
// (Oliveira and Takahashi, "An Enhancement of the Bisection Method Average Performance
// Preserving Minmax Optimality", ACM TOMS 47(1), 2020) reads the values, not only their
// signs: it takes the false-position point, moved towards the midpoint by a truncation
// and projected into a window around it that shrinks so that the search never needs more
// than n0 evaluations beyond bisection's count (n0 = 1 here), while on a smooth quantity
// it converges superlinearly. Parameters as the paper recommends: kappa1 = 0.2 / width,
// kappa2 = 2, n0 = 1. One addition, as in Brent's method: a point is never placed closer
// than tolerance / 2 to an end.
// The result is what bisection gives: a bracket no wider than `tolerance` whose ends lie
// on different sides, the answer its midpoint (or, for a tolerance finer than the spacing
// of doubles there, the narrowest bracket they allow). Where the quantity crosses once, the two
// searches' answers lie within `tolerance` of each other (tests compare them).

#include <algorithm>
#include <cmath>

namespace dtperf {

/// A bracket [low, high] whose ends lie on different sides of a crossing.
struct CrossingBracket {
  double low = 0.0;
  double high = 0.0;
  int evaluations = 0;  // of the quantity, the two given ends not counted
  double midpoint() const { return 0.5 * (low + high); }
};

/// Narrows [low, high] to `tolerance` around a change of side of `value_at(x)`, where a
/// value's side is whether it is > 0. `value_low` and `value_high` are the values at the
/// ends and must lie on different sides.
template <typename ValueAt>
CrossingBracket narrow_crossing(ValueAt&& value_at, double low, double value_low, double high, double value_high,
                                double tolerance) {
  const bool low_side = value_low > 0.0;
  // The values turned so that the low end's are the negative ones, for the interpolation.
  const auto turned = [&](double value) { return low_side ? -value : value; };
  CrossingBracket out{low, high, 0};
  double y_low = turned(value_low);
  double y_high = turned(value_high);
  const double epsilon = 0.5 * tolerance;
  const double kappa1 = 0.2 / (high - low);
  constexpr double kKappa2 = 2.0;
  constexpr int kExtraSteps = 1;  // n0
  const int halvings = std::max(0, static_cast<int>(std::ceil(std::log2((high - low) / tolerance))));
  const int most = halvings + kExtraSteps;
  while (out.high - out.low > tolerance) {
    const double width = out.high - out.low;
    const double middle = 0.5 * (out.low + out.high);
    const double radius = std::max(0.0, epsilon * std::exp2(most - out.evaluations) - 0.5 * width);
    const double delta = kappa1 * std::pow(width, kKappa2);
    double falsi = (y_high * out.low - y_low * out.high) / (y_high - y_low);
    if (!std::isfinite(falsi)) falsi = middle;
    const double toward = middle >= falsi ? 1.0 : -1.0;
    const double truncated = delta <= std::abs(middle - falsi) ? falsi + toward * delta : middle;
    // No closer than tolerance / 2 to either end (a point toward the middle stays inside
    // the window): once the estimate is that close to the crossing, the point lands beyond
    // it and the bracket closes, instead of creeping up on it from one side.
    double x = std::clamp(std::abs(truncated - middle) <= radius ? truncated : middle - toward * radius,
                          out.low + epsilon, out.high - epsilon);
    // A tolerance below the spacing of doubles here rounds the clamp onto an end: bisect,
    // and stop where not even the middle lies strictly inside.
    if (!(x > out.low && x < out.high)) x = middle;
    if (!(x > out.low && x < out.high)) break;
    const double value = value_at(x);
    ++out.evaluations;
    if ((value > 0.0) == low_side) {
      out.low = x;
      y_low = turned(value);
    } else {
      out.high = x;
      y_high = turned(value);
    }
  }
  return out;
}

}  // namespace dtperf
