#pragma once
// Parts the renderers share (render_*.cpp): one scheme's memory, mixing, steps, variable
// compute and local-SGD round, as JSON and tables.
#include <span>
#include <string>

#include "dtperf/io/render.hpp"

namespace dtperf::io {

Json memory_json(const MemoryBreakdown& memory);
Json mixing_json(const MixingQuality& mixing);
Json variability_json(const VariabilityOutcome& variability, std::span<const double> idle_per_rank_s);
/// p50, p99 and idle times of one scheme under variable compute.
std::string variability_table(const VariabilityOutcome& variability);
/// Per step of a gossip period: bytes per link level and the iteration time; the table
/// then says the period's p50 and p90 iteration times.
Json steps_json(const SchemeOutcome& outcome);
std::string steps_table(const SchemeOutcome& outcome);
/// Local SGD / DiLoCo: the round (groups, inner step, each synchronisation's parts,
/// compute utilisation).
Json local_sgd_json(const LocalSgdRound& round, const LocalSgdOptions& options);
std::string local_sgd_table(const LocalSgdRound& round, const LocalSgdOptions& options);

}  // namespace dtperf::io
