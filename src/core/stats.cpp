#include "dtperf/stats.hpp"

#include <algorithm>
#include <cmath>

namespace dtperf {

double CanonicalMean::mean() {
  std::sort(values_.begin(), values_.end());
  double total = 0.0;
  for (const auto& [value, weight] : values_) total += weight;
  if (total <= 0.0) return 0.0;
  // value x (merged / total): a single distinct value comes back exactly.
  double sum = 0.0;
  std::size_t i = 0;
  while (i < values_.size()) {
    const double value = values_[i].first;
    double merged = 0.0;
    while (i < values_.size() && values_[i].first == value) merged += values_[i++].second;
    sum += value * (merged / total);
  }
  return sum;
}

void DurationHistogram::reset(double reference_s) {
  bins_.assign(kBins + 1, 0.0);
  inverse_width_ = 2000.0 / reference_s;
  total_ = 0.0;
  largest_ = 0.0;
}

double DurationHistogram::quantile(double q) const {
  if (total_ <= 0.0) return 0.0;
  const double target = q * total_;
  double seen = 0.0;
  for (std::size_t bin = 0; bin < kBins; ++bin) {
    seen += bins_[bin];
    if (seen >= target && bins_[bin] > 0.0) return (static_cast<double>(bin) + 0.5) / inverse_width_;
  }
  return largest_;
}

}  // namespace dtperf
