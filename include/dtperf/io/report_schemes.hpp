#pragma once
// Printed forms of scheme comparisons and advice (JSON and tables from the same structs).
#include <span>
#include <string>
#include <vector>

#include "dtperf/analysis/advice.hpp"
#include "dtperf/analysis/evaluator.hpp"
#include "dtperf/io/json_reader.hpp"

namespace dtperf::io {

Json mixing_json(const MixingQuality& mixing);
Json variability_json(const VariabilityOutcome& variability, std::span<const double> idle_per_rank_s);
/// p50, p99 and idle times of one scheme under variable compute.
std::string variability_table(const VariabilityOutcome& variability);
/// Per step of a gossip period: bytes per link level and the iteration time.
Json steps_json(const SchemeOutcome& outcome);
/// GiB per part, the total, the GPU's memory and whether it fits.
Json memory_json(const MemoryBreakdown& memory);
/// "# memory per GPU: 9.8 of 32 GiB (weights 0.10, gradients ...)", with "DOES NOT FIT" when so.
std::string memory_line(const MemoryBreakdown& memory);
Json scheme_outcome_json(const SchemeOutcome& outcome, double allreduce_iteration_s);
Json advice_json(const Advice& advice);

/// One row per scheme: iteration, exposed communication, speedup over All-Reduce,
/// inter-node bytes per node, NIC utilization, spectral gap, memory per GPU, and the p90
/// iteration time over a period (p99 under variable compute); then the
/// schemes that do not fit in GPU memory, and the unavailable ones.
std::string compare_table(const std::vector<SchemeOutcome>& outcomes);

/// Per step of a gossip period: bytes per link level and the iteration time; then the
/// period's p50 and p90 iteration times.
std::string steps_table(const SchemeOutcome& outcome);

/// Local SGD / DiLoCo: the round (groups, inner step, each synchronisation's parts,
/// compute utilisation) as JSON and as a small table with its header line.
Json local_sgd_json(const LocalSgdRound& round, const LocalSgdOptions& options);
std::string local_sgd_table(const LocalSgdRound& round, const LocalSgdOptions& options);

/// The advisor's answer in words and small tables.
std::string advice_text(const Advice& advice);

}  // namespace dtperf::io
