#pragma once
// What `dtperf fit` builds: measured series from raw calibration files and nccl-tests
// logs, their fits, and a calibrated profile. No file access and no clock here (the
// command reads the inputs and decides the date).
//
// Profile assembly:
//  - start from the base profile if one is given, else from defaults: the GPU block
//    (peaks, memory) and compute settings of the built-in profile whose GPU matches the
//    measured GPU's name (family such as "H100" and memory size), else peaks from the
//    best measured GEMM rate per dtype and the measured copy bandwidth; what is still
//    missing comes from a generic base (fp32 10 TFLOP/s, fp16/bf16 100 TFLOP/s,
//    1,000 GB/s), named in the GPU model and the notes: the links need none of it, and
//    compute anchored on a measurement only scales it;
//  - the cluster shape: the raw file's world; else, with a base, the base's GPUs per node
//    and the most nodes a log spans (the base's count when every log is on one node), so
//    that the profile predicts the measured shape by default; else the largest log's;
//  - calibration tables: every all_reduce, sendrecv, all_gather and reduce_scatter
//    series measured on an otherwise idle node (one group per node), outliers left out;
//    fits: every series;
//  - link parameters: derive_link_measurements / apply_link_measurements (fit.hpp), with
//    the NIC count from --nics-per-node or the base; what no measurement gives keeps the
//    base's value, or without a base a placeholder that the notes name (intra 100 GB/s
//    and 2 us; one 100 Gbit/s NIC, 5 us, efficiency 1). An inter-node latency derived
//    through the ring formula uses the profile's intra latency when none was measured,
//    so that the profile reproduces the measured alpha;
//  - compute: GEMM efficiency curves (monotone), copy bandwidth, iteration CV;
//  - provenance: source "calibrated", tool "dtperf fit 0.1.0", the date given, the input
//    files as references, the derivation notes, one residual line per fit.
//
// nccl-tests logs become series as follows. A log on one node is group "node" (or
// "pair_intra" for sendrecv); on several nodes, 2 ranks are "pair_inter", one rank per
// node "one_per_node", anything else "world". sendrecv_perf runs a ring in which every
// rank sends to the next: across nodes only one pair per node crosses, so it counts as
// one pair_inter pair (2 ranks on 2 nodes) at concurrency 1. The faster of the out-of-place
// and in-place time is used at each size: both measure the same call, and interference
// only ever adds time.
#include <optional>
#include <string>
#include <vector>

#include "dtperf/cluster.hpp"
#include "dtperf/fit.hpp"
#include "dtperf/io/calibration_json.hpp"
#include "dtperf/io/nccl_tests.hpp"

namespace dtperf::io {

struct FitInputs {
  std::vector<std::pair<std::string, RawCalibration>> raws;  // file, content
  std::vector<std::pair<std::string, NcclTestsLog>> logs;
};

struct FitSettings {
  std::optional<ClusterProfile> base;
  std::string name;  // "" for the default
  std::optional<double> nic_gbps;
  std::optional<int> nics_per_node;
  std::string created;  // YYYY-MM-DD
  // Fit a link level even where its measurements are far below the hardware (the
  // far-below guardrails); by default such a level is not fitted: the base's values stay.
  // Raw files of the host backend (CPU ranks over TCP) are always fitted.
  bool keep_degraded = false;
};

/// The series of all inputs; InputError for a log whose node count is unknown, a series
/// with fewer than 2 sizes, or a shape measured twice.
std::vector<MeasuredSeries> collect_series(const FitInputs& inputs);

FitOutcome build_calibrated_profile(const FitInputs& inputs, const FitSettings& settings);

/// "8 B", "64 KiB", "1.5 GiB".
std::string format_bytes(double bytes);

/// "all_reduce 16 ranks/2 nodes: rms 2.1 %, worst 8.3 % at 64 KiB" (+ outliers).
std::string residual_line(const MeasuredSeries& series, const CollectiveFit& fit);

}  // namespace dtperf::io
