#pragma once
// The scale part of dtperf_bench (bench_scale.cpp).
#include <string>

namespace dtperf::bench {

/// The child side of a spectral-gap case: builds the topology, computes its gap, prints
/// "SECONDS GAP".
int gap_case(const std::string& topology, int ranks, int per_node);

/// Every scale case in a fresh process, against its goal: `self` is this program,
/// `dtperf` the command-line binary.
void bench_scale(const std::string& self, const std::string& dtperf);

}  // namespace dtperf::bench
