#pragma once
// Raw calibration measurements (schema "dtperf.calibration/3", and /2 and /1, calibrate/FORMAT.md): what
// dtperf-calibrate writes and `dtperf fit` reads. Reading is strict, as for profiles:
// every failure is an InputError at the JSON pointer of the bad value. Beyond types and
// ranges it checks:
//  - world: ranks = nodes x ranks_per_node, one host per node, placement ranks distinct
//    and in range, each placement's host among the hosts;
//  - each collective: its group's shape (world: all ranks; node: the ranks of one node;
//    one_per_node: one rank on every node; pair_intra: 2 ranks on 1 node; pair_inter: 2
//    ranks on 2 nodes; two_nodes: the ranks of 2 nodes; self: one rank alone, all_reduce
//    only, busbw 0), at least 2 ranks except on self, sendrecv on 2 ranks, room on a
//    node for concurrent_per_node groups, no (collective, group, concurrency) twice;
//  - points: sizes strictly increasing, time_us_min <= time_us <= time_us_max, algbw =
//    bytes / time and busbw = algbw x the collective's factor (2(n-1)/n all_reduce,
//    (n-1)/n all_gather and reduce_scatter, 1 sendrecv) within 1 % (the values are
//    redundant; writers round them), and `correct: false` refused: the result was
//    wrong, so the time measures something else;
//  - gemm: flops = 2 m n k and tflops = flops / time, within 1 %; copy: GB_per_s =
//    2 x bytes / time (each byte copied is read and written) within 1 %;
//    iteration_spread: cv = stddev / mean within 1 % (or 1e-4), median_us and robust_cv
//    together (version 3); contention: the
//    all-reduce's group is world (all ranks) or self (one rank), every time positive.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "dtperf/cluster.hpp"
#include "dtperf/io/json_reader.hpp"

namespace dtperf::io {

inline constexpr const char* kCalibrationSchema = "dtperf.calibration/3";
/// The second version, still read: no `median_us` and `robust_cv` in `iteration_spread`.
inline constexpr const char* kCalibrationSchemaV2 = "dtperf.calibration/2";
/// The first version, still read: no `contention`, no group `self`, no fp8 GEMMs.
inline constexpr const char* kCalibrationSchemaV1 = "dtperf.calibration/1";

struct CalibrationPlacement {
  int rank = 0;
  std::string host;
  int local_rank = 0;
  std::optional<int> device;  // GPU backend
  std::string device_name;    // GPU backend
  std::string bus_id;         // GPU backend
};

struct CalibrationWorld {
  int ranks = 1;
  int nodes = 1;
  int ranks_per_node = 1;
  std::vector<std::string> hosts;
  std::vector<CalibrationPlacement> placement;
};

struct CalibrationPoint {
  double bytes = 0.0;
  std::int64_t count = 0;
  double time_us = 0.0;
  double time_us_min = 0.0;
  double time_us_max = 0.0;
  std::optional<double> time_us_median;  // the slowest rank's median per call, if timed per call
  double algbw_GB_per_s = 0.0;
  double busbw_GB_per_s = 0.0;
};

struct CalibrationCollective {
  std::string pointer;     // "/collectives/3", for messages
  std::string collective;  // "all_reduce", "sendrecv", "all_gather", "reduce_scatter"
  std::string group;       // "world", "node", "one_per_node", "pair_intra", "pair_inter", "two_nodes"
  int ranks = 0;
  int nodes = 0;
  int concurrent_per_node = 1;
  std::string dtype;       // "float32", ...
  int warmup_iterations = 0;
  int iterations = 0;
  std::vector<CalibrationPoint> points;  // strictly increasing bytes
};

struct CalibrationGemm {
  DType dtype = DType::fp32;
  std::int64_t m = 0, n = 0, k = 0;
  double flops = 0.0;
  double time_us = 0.0;
  double tflops = 0.0;
};

struct CalibrationCopy {
  double bytes = 0.0;     // size of the copy
  double time_us = 0.0;
  double GB_per_s = 0.0;  // traffic: 2 x bytes (read and written) / time
};

struct CalibrationSpread {
  int rank = 0;
  int iterations = 0;
  double mean_us = 0.0;
  double stddev_us = 0.0;
  double cv = 0.0;
  // Without the stalls (written by calibration programs since 2026-11-30): the median and
  // the interquartile range / 1.349 / median. Both or neither.
  std::optional<double> median_us;
  std::optional<double> robust_cv;
};

/// A GEMM and an all-reduce each timed alone and beside the other (slowest rank's mean).
struct CalibrationContention {
  DType dtype = DType::bf16;
  std::int64_t m = 0, n = 0, k = 0;
  std::string collective;  // "all_reduce"
  std::string group;       // "world", or "self" on a one-rank world
  int ranks = 0, nodes = 0;
  double bytes = 0.0;
  int calls = 0;
  double gemm_time_us_alone = 0.0, gemm_time_us_beside = 0.0;
  double collective_time_us_alone = 0.0, collective_time_us_beside = 0.0;
  bool covered = false;  // the other side ran through both timed spans
};

struct RawCalibration {
  std::string schema;
  std::string tool;
  std::string backend;  // "nccl" or "host"
  std::string created;  // ISO date-time, UTC
  std::vector<std::string> arguments;
  std::map<std::string, std::string> environment;
  std::map<std::string, std::string> versions;  // cuda_runtime, cuda_driver, nccl, gpu_driver
  CalibrationWorld world;
  double budget_s = 0.0;
  double elapsed_s = 0.0;
  bool truncated = false;
  std::vector<CalibrationCollective> collectives;
  std::vector<CalibrationGemm> gemm;
  std::vector<CalibrationCopy> copy;
  std::vector<CalibrationSpread> iteration_spread;
  std::vector<CalibrationContention> contention;

  /// The date part of `created` ("2026-11-21").
  std::string created_date() const { return created.substr(0, 10); }
};

RawCalibration parse_calibration(const Json& json, const std::string& file);
RawCalibration read_calibration_file(const std::string& path);

}  // namespace dtperf::io
