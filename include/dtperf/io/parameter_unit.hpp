// How a fitted run parameter is printed: latencies and host work per launch or tensor in
// us, host work per byte in ns/B, the host ceiling in Gbit/s, the compute scales as "x",
// efficiencies and interference kappas as plain ratios.
#pragma once

#include "dtperf/analysis/fit_runs.hpp"
#include "dtperf/units.hpp"

namespace dtperf {

struct ParameterUnit {
  double scale;      // printed = natural value x scale
  const char* unit;  // "" for a plain ratio
};

inline ParameterUnit parameter_unit(RunParameter p) {
  switch (p) {
    case RunParameter::inter_latency:
    case RunParameter::launch_overhead:
    case RunParameter::tensor_overhead: return {1.0 / units::us, "us"};
    case RunParameter::host_per_byte:
    case RunParameter::inter_host_per_byte: return {1e9, "ns/B"};
    case RunParameter::inter_host: return {1.0, "Gbit/s"};
    case RunParameter::compute_scale:
    case RunParameter::forward_scale:
    case RunParameter::backward_scale: return {1.0, "x"};
    default: return {1.0, ""};
  }
}

}  // namespace dtperf
