#include "dtperf/workload.hpp"

#include <cstdint>

namespace dtperf {

std::int64_t ModelSpec::total_params() const {
  std::int64_t total = 0;
  for (const auto& t : tensors) total += t.params;
  return total;
}

double ModelSpec::total_bytes() const {
  return static_cast<double>(total_params()) * param_bytes;
}

double ModelSpec::forward_flops_per_sample() const {
  double total = 0.0;
  for (const auto& t : tensors) total += t.forward_flops_per_sample;
  return total;
}

bool ModelSpec::has_measured_layers() const {
  return !tensors.empty() && tensors.front().measured_backward_s.has_value();
}

}  // namespace dtperf
