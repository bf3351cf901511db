#pragma once
// The raw calibration file, `dtperf.calibration/3` (calibrate/FORMAT.md): measurements only,
// units in the key names, GB = 1e9 bytes. Rank 0 fills a RawRun and writes it atomically
// (a temporary file in the same folder, then rename), so a reader never sees half a file.
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dtperf/version.hpp"
#include "plan.hpp"
#include "sweep.hpp"
#include "topology.hpp"

namespace dtperf::calibrate {

inline constexpr const char* kRawSchema = "dtperf.calibration/3";
inline const std::string kToolName = std::string("dtperf-calibrate ") + kVersion;

struct RawPoint {
  std::uint64_t bytes = 0;
  std::uint64_t count = 0;  // float32 elements
  double time_us = 0.0, time_us_min = 0.0, time_us_max = 0.0;
  double algbw_GB_per_s = 0.0, busbw_GB_per_s = 0.0;
  bool correct = false;
  double time_us_median = -1.0;  // negative: not timed per call, not written
};

struct RawCollective {
  std::string collective, group;
  int ranks = 0, nodes = 0, concurrent_per_node = 1;
  std::string dtype = "float32";
  int warmup_iterations = 0, iterations = 0;
  std::vector<RawPoint> points;
};

struct RawGemm {
  std::string dtype;
  std::int64_t m = 0, n = 0, k = 0;
  double flops = 0.0, time_us = 0.0, tflops = 0.0;
};

struct RawCopy {
  std::uint64_t bytes = 0;
  double time_us = 0.0, GB_per_s = 0.0;  // GB_per_s counts bytes read + written
};

struct RawSpread {
  int rank = 0, iterations = 0;
  double mean_us = 0.0, stddev_us = 0.0, cv = 0.0;
  // The same spread without the stalls: the median, and the interquartile range over
  // 1.349 (a normal law's) over the median, which a quarter of the samples stalled
  // leaves unmoved.
  double median_us = 0.0, robust_cv = 0.0;
};

/// A GEMM and a collective, each timed alone and beside the other (GPU backend): how much
/// each side slows the other while they share the GPU. Times are the slowest rank's mean
/// over `calls` calls; `covered`: on every rank the other side ran through the whole
/// timed span.
struct RawContention {
  std::string dtype;  // the GEMM's
  std::int64_t m = 0, n = 0, k = 0;
  std::string collective = "all_reduce", group;  // "world", or "self" on a one-rank world
  int ranks = 0, nodes = 0;
  std::uint64_t bytes = 0;
  int calls = 0;
  double gemm_time_us_alone = 0.0, gemm_time_us_beside = 0.0;
  double collective_time_us_alone = 0.0, collective_time_us_beside = 0.0;
  bool covered = false;
};

struct RawRun {
  std::string backend;  // "nccl" or "host"
  std::string created;  // UTC, ISO 8601
  std::vector<std::string> arguments;
  std::map<std::string, std::string> environment;
  std::map<std::string, std::string> versions;
  std::vector<RankPlace> placement;  // index = rank
  std::vector<std::string> hosts;    // one per node, in node order
  int nodes = 0, ranks_per_node = 0;
  double budget_s = 0.0, elapsed_s = 0.0;
  bool truncated = false;
  std::vector<RawCollective> collectives;
  std::vector<RawGemm> gemm;
  std::vector<RawCopy> copy;
  std::vector<RawSpread> iteration_spread;
  std::vector<RawContention> contention;
};

/// The point of a collective entry: time in us, algbw = bytes / time, busbw = algbw *
/// busbw_factor (nccl-tests). `result` must be measured.
RawPoint make_raw_point(const PlanEntry& entry, std::size_t point, const PointResult& result);

/// The measured points of a collective entry (unmeasured points are left out).
RawCollective make_raw_collective(const PlanEntry& entry, const std::vector<PointResult>& results,
                                  const SweepCounts& counts);

/// Mean, standard deviation (population) and CV of per-iteration times; their median and
/// robust CV (quartiles by linear interpolation between order statistics).
RawSpread make_raw_spread(int rank, const std::vector<double>& samples_s);

/// Fills the run's world description from the topology.
void set_world(RawRun& run, const Topology& topology);

nlohmann::ordered_json to_json(const RawRun& run);

/// Writes `json` to `path` atomically ("-" writes to stdout); throws CalibrationError.
void write_json_file(const nlohmann::ordered_json& json, const std::string& path);

/// Throws UsageError when `path` cannot be written (checked before any measurement, so an
/// unwritable -o is found in a second, not after the whole run). "-" is stdout.
void check_writable(const std::string& path);

/// Now in UTC as "2026-11-21T10:00:00Z".
std::string utc_now_iso();

/// The variables worth recording: NCCL_*, CUDA_*, OMPI_*, PMI_*, PMIX_*, SLURM_*, DTPERF_*.
std::map<std::string, std::string> captured_environment();

}  // namespace dtperf::calibrate
