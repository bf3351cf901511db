#pragma once
// The axes of `dtperf sweep`, from `--vary NAME=VALUES` (repeatable). VALUES is a comma
// list of items; a numeric item may be a range:
//   10,25,100        the values given
//   1:64:x2          1, 2, 4, ..., 64 (geometric: each value times 2, up to the end)
//   10:100:10        10, 20, ..., 100 (arithmetic, end included)
//   1:8              1, 2, ..., 8 (step 1)
// Names: model, scheme (all: All-Reduce, SGP and every topology), nodes, gpus-per-node,
// nic-gbps, inter-latency-us, batch-per-gpu, compression, compute-cv. Each is the option
// of the same name, turned into an axis; a value an option would refuse is refused the
// same way, naming the axis.
#include <string>
#include <vector>

#include "dtperf/analysis/sweep.hpp"

namespace dtperf::cli {

/// Axis values as written, before the models are loaded.
struct AxisSpecs {
  std::vector<std::string> models;
  SweepAxes axes;  // everything but the models
};

/// The most values one axis may take.
inline constexpr std::size_t kMaxAxisValues = 10'000'000;

/// InputError (input "vary") naming the item and the reason.
AxisSpecs parse_axes(const std::vector<std::string>& vary);

/// The numbers a VALUES list stands for (exposed for tests).
std::vector<double> expand_numbers(const std::string& axis, const std::string& values);

}  // namespace dtperf::cli
