#pragma once
// Order-independent statistics for the simulators, in memory that does not grow with
// the number of iterations.
#include <cstdint>
#include <utility>
#include <vector>

namespace dtperf {

/// The weighted mean of values, computed canonically: equal values are merged and the
/// sum runs in ascending order of value, so the result does not depend on the order
/// values arrive in, nor on whether equal values came as one weighted entry or many.
/// (Simulating every rank then gives bit for bit what simulating rank classes gives.)
class CanonicalMean {
 public:
  void reserve(std::size_t n) { values_.reserve(n); }
  void clear() { values_.clear(); }
  void add(double value, double weight) { values_.emplace_back(value, weight); }
  /// Sorts in place; no allocation within the reserved capacity.
  double mean();

 private:
  std::vector<std::pair<double, double>> values_;
};

/// Quantiles of durations around a reference (the deterministic iteration time): bins
/// 1/2000 of the reference wide up to 16x the reference, reported at their centres; the
/// few durations beyond fall into one last bin, reported as the largest seen.
class DurationHistogram {
 public:
  void reset(double reference_s);
  void add(double seconds) {
    const double scaled = seconds * inverse_width_;
    const std::size_t bin = scaled < kBins ? static_cast<std::size_t>(scaled < 0.0 ? 0.0 : scaled) : kBins;
    bins_[bin] += 1.0;
    total_ += 1.0;
    if (seconds > largest_) largest_ = seconds;
  }
  double quantile(double q) const;

 private:
  static constexpr std::size_t kBins = 32000;
  std::vector<double> bins_;
  double inverse_width_ = 0.0;
  double total_ = 0.0;
  double largest_ = 0.0;
};

}  // namespace dtperf
