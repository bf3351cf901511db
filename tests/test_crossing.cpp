// The break-even search's bracketing (crossing.hpp): the same guarantee as bisection (a
// bracket of at most the tolerance whose ends lie on different sides), the same answer
// within the tolerance, and fewer evaluations where the quantity is smooth.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>

#include "dtperf/analysis/crossing.hpp"

using namespace dtperf;

namespace {

// The bisection the search replaced: halve [0, 1] until it is no wider than `tolerance`
// (14 evaluations for 1e-4: 2^-14 = 6.1e-5), answer the midpoint.
double bisection(const std::function<double(double)>& value_at, double tolerance) {
  const bool low_side = value_at(0.0) > 0.0;
  double low = 0.0;
  double high = 1.0;
  while (high - low > tolerance) {
    const double mid = 0.5 * (low + high);
    ((value_at(mid) > 0.0) == low_side ? low : high) = mid;
  }
  return 0.5 * (low + high);
}

struct Case {
  const char* name;
  std::function<double(double)> value_at;
  int most_evaluations;  // what the case shows; ITP's bound is 15 for all
};

}  // namespace

TEST_CASE("the crossing search keeps bisection's bracket and answer, in fewer evaluations where it is smooth",
          "[break-even][crossing]") {
  constexpr double kTolerance = 1e-4;
  // ITP's bound: ceil(log2(1 / 1e-4)) = 14 halvings, plus n0 = 1.
  constexpr int kBound = 15;
  const Case cases[] = {
      // Linear: false position lands within the tolerance at once; the clamp then closes
      // the bracket.
      {"linear, crossing at 0.053", [](double x) { return 0.053 - x; }, 5},
      // An advantage that falls as 1/(1 + 100 cv) (a ratio of two times).
      {"ratio, crossing at 1/900", [](double x) { return 1.0 / (1.0 + 100.0 * x) - 0.9; }, 7},
      // A small ripple on a line (simulation noise from one fixed stream).
      {"line with a ripple", [](double x) { return 0.19 - 0.2 * x + 0.001 * std::sin(300.0 * x); }, 7},
      // Strongly convex: false position creeps from one side; ITP's projection bounds it.
      {"exponential", [](double x) { return std::exp(-20.0 * x) - 0.3; }, kBound},
      // A step: the values tell nothing beyond their signs.
      {"step at 0.3141", [](double x) { return x < 0.3141 ? 1.0 : -1.0; }, kBound},
      // Rising through zero (the low end's side is "not above zero").
      {"rising cube", [](double x) { return x * x * x - 1e-6; }, 8},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    int evaluations = 0;
    const auto counted = [&](double x) {
      ++evaluations;
      return c.value_at(x);
    };
    const CrossingBracket found = narrow_crossing(counted, 0.0, c.value_at(0.0), 1.0, c.value_at(1.0), kTolerance);
    INFO("bracket [" << found.low << ", " << found.high << "] after " << found.evaluations << " evaluations");
    CHECK(found.evaluations == evaluations);
    CHECK(found.high - found.low <= kTolerance);
    CHECK((c.value_at(found.low) > 0.0) == (c.value_at(0.0) > 0.0));
    CHECK((c.value_at(found.high) > 0.0) == (c.value_at(1.0) > 0.0));
    CHECK(std::abs(found.midpoint() - bisection(c.value_at, kTolerance)) <= kTolerance);
    CHECK(found.evaluations <= c.most_evaluations);
    CHECK(found.evaluations <= kBound);
  }
}

TEST_CASE("the crossing search on a bracket already narrow enough evaluates nothing", "[break-even][crossing]") {
  int evaluations = 0;
  const CrossingBracket found = narrow_crossing(
      [&](double) {
        ++evaluations;
        return 0.0;
      },
      0.5, 1.0, 0.50005, -1.0, 1e-4);
  CHECK(evaluations == 0);
  CHECK(found.midpoint() == 0.5 * (0.5 + 0.50005));
}

TEST_CASE("the crossing search stops where the doubles cannot split the bracket further", "[break-even][crossing]") {
  // A tolerance of 1e-300 around 0.6: the spacing of doubles there is 1.1e-16, so the
  // search ends at two neighbouring doubles (the clamp would otherwise put every point
  // on an end).
  const auto value_at = [](double x) { return 0.6 - x; };
  const CrossingBracket found = narrow_crossing(value_at, 0.5, value_at(0.5), 1.0, value_at(1.0), 1e-300);
  CHECK(found.low <= 0.6);
  CHECK(found.high >= 0.6);
  CHECK(found.high - found.low < 1e-15);
  CHECK(found.evaluations < 100);
}
