#pragma once
// The built-in model zoo: workloads computed from architecture formulas, one
// parameter tensor per entry in backward (gradient-ready) order, with the FLOPs and
// activation traffic of the operator that owns it. Each entry carries its published
// parameter count, which the computed tensors must add up to exactly.
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "dtperf/workload.hpp"

namespace dtperf {

struct ZooEntry {
  const char* name;          // "resnet50"
  const char* description;   // one line: architecture, input, sample unit
  const char* citation;      // paper and the reference implementation counted
  std::int64_t published_params;
  ModelSpec (*build)();
};

/// All zoo entries, in a stable order.
std::span<const ZooEntry> model_zoo();

/// The model by name, or nullopt.
std::optional<ModelSpec> zoo_model(const std::string& name);

}  // namespace dtperf
