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

bool ModelSpec::has_measured_layers() const {
  return !tensors.empty() && tensors.front().measured_backward_s.has_value();
}

const char* optimizer_name(Optimizer optimizer) {
  switch (optimizer) {
    case Optimizer::sgd: return "sgd";
    case Optimizer::sgd_momentum: return "sgd-momentum";
    case Optimizer::adam: return "adam";
  }
  return "?";
}

std::optional<Optimizer> parse_optimizer(const std::string& name) {
  if (name == "sgd") return Optimizer::sgd;
  if (name == "sgd-momentum" || name == "momentum") return Optimizer::sgd_momentum;
  if (name == "adam" || name == "adamw") return Optimizer::adam;
  return std::nullopt;
}

}  // namespace dtperf
