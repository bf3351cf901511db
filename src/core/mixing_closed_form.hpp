#pragma once
// Spectral gaps in closed form for the built-in topologies (mixing_closed_form.cpp).
#include <optional>

#include "dtperf/topology.hpp"

namespace dtperf {

/// |lambda_2| of the topology's period-averaged mixing matrix (random-matching: of its
/// expected step matrix), from the topology's definition in O(n) or less; none for a
/// topology this file does not know, which the eigen-solvers then handle.
std::optional<double> closed_form_second_eigenvalue(const Topology& topology);

/// Whether the product of a period's steps is the exact average, where the definition
/// settles it without multiplying; none: check numerically.
std::optional<bool> closed_form_exact_average(const Topology& topology);

/// The distinct peers rank 0 meets in a period, where the definition gives them; none:
/// count them in the schedule.
std::optional<int> closed_form_degree(const Topology& topology);

}  // namespace dtperf
