#pragma once
// A cluster profile: N nodes of G GPUs, the links inside a node and between nodes,
// what one GPU computes, optional calibrated tables, and where the numbers came from.
// This is the typed form of profiles/*.json (see io/profile_json.hpp for the format).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dtperf/names.hpp"

namespace dtperf {

// fp8: matrix products in 8-bit floating point (NVIDIA Transformer Engine, Hopper and
// later), the rest of training in 16-bit: activations, weights and memory as bf16. Every
// matrix product runs at the fp8 peak, attention's included, which Transformer Engine keeps
// in bf16 by default: optimistic where attention is a large share.
enum class DType : std::uint8_t { fp32, tf32, fp16, bf16, fp8 };
template <>
struct EnumNames<DType> {
  static constexpr Named<DType> table[] = {
      {DType::fp32, "fp32"},
      {DType::tf32, "tf32"},
      {DType::fp16, "fp16"},
      {DType::bf16, "bf16"},
      {DType::fp8, "fp8"},
  };
};

/// Bytes of one activation element when training computes in `dtype`: 4 for fp32 and tf32
/// (tf32 is an fp32 format in memory: only the matrix units round), 2 for fp16, bf16 and
/// fp8 (16-bit outside the matrix products, above).
constexpr double activation_bytes_per_element(DType dtype) {
  return dtype == DType::fp32 || dtype == DType::tf32 ? 4.0 : 2.0;
}

/// Measured time per message size for one collective on one group shape, e.g.
/// all-reduce on 16 ranks over 2 nodes; interpolated log-log between points.
struct CollectiveTable {
  std::string collective;  // "all_reduce", "sendrecv"
  int ranks = 0;
  int nodes = 0;
  std::vector<std::pair<double, double>> bytes_and_time_s;  // sorted by bytes
};

/// Achieved GEMM efficiency (fraction of the dtype's peak) against the GEMM's FLOPs.
struct GemmEfficiencyCurve {
  DType dtype = DType::fp32;
  std::vector<std::pair<double, double>> flops_and_efficiency;  // sorted by FLOPs
};

/// A latency-bandwidth fit of one collective on one link level, from calibration.
/// time(bytes) = alpha_s + bytes * factor / bus_bytes_per_s, per size segment.
struct AlphaBetaSegment {
  double min_bytes = 0.0;
  double max_bytes = 0.0;
  double alpha_s = 0.0;
  double bus_bytes_per_s = 0.0;
};
struct AlphaBetaFit {
  std::string collective;  // "all_reduce", "sendrecv"
  std::string level;       // "intra" (one node) or "inter" (spans nodes)
  int ranks = 0;
  int nodes = 0;
  std::vector<AlphaBetaSegment> segments;
  double rms_relative_error = 0.0;
};

struct Provenance {
  std::string source;  // "datasheet", "calibrated", "manual"
  std::string created;   // ISO date
  std::string tool;      // what made it (e.g. "dtperf fit 0.1.0")
  std::vector<std::string> references;
  std::string notes;
  // For calibrated profiles: fit residuals and the worst-fitting points, as text lines.
  std::vector<std::string> residuals;
};

struct ClusterProfile {
  std::string name;
  std::string description;
  int nodes = 1;
  int gpus_per_node = 1;

  struct Gpu {
    std::string model;
    std::map<DType, double> peak_flops_per_s;  // dense peak per dtype
    double memory_bytes_per_s = 0.0;           // HBM bandwidth (datasheet)
    double memory_gib = 0.0;
  } gpu;

  struct IntraNode {
    std::string link;
    double bandwidth_bytes_per_s = 0.0;  // per GPU, per direction
    double latency_s = 0.0;              // per ring step
    double efficiency = 1.0;             // achieved / link rate in collectives
  } intra;

  struct InterNode {
    std::string link;
    int nics_per_node = 1;
    double nic_gbps = 0.0;               // line rate of one NIC
    double latency_s = 0.0;              // per hop between nodes
    double transport_efficiency = 1.0;   // achieved / line rate
    double host_gbps = 0.0;              // host-driven transport ceiling per node (0: none)
    double host_cpu_ns_per_byte = 0.0;   // measured CPU time per byte across nodes (0: none)
    // How much of its own CPU time a host transport's exchange waits for beside compute
    // (Contention::host_exchange_share): 1 processor sharing, 0 served first.
    double host_exchange_share = 1.0;
    // What the flows of several groups that share a node's NICs reach together, over what
    // one flow reaches alone (NetworkParams::shared_nic_efficiency; 1: no loss).
    double shared_nic_efficiency = 1.0;
  } inter;

  // The collective library, where it is not NCCL: its name, whether its ring moves in
  // lockstep (NetworkParams::lockstep_ring; gloo's does), and how many collectives one
  // process group runs at once (NetworkParams::collectives_in_flight; gloo: 2; 0: one
  // stream per link level, NCCL's).
  struct Transport {
    std::string library;
    bool lockstep_ring = false;
    int collectives_in_flight = 0;
    // A training framework's host work around its collectives (network.hpp): per
    // collective launched, on the communication stream before the transfer (its hook, the
    // library's enqueue); on the iteration's critical path, per gradient tensor (hooks,
    // per-tensor coordination), per byte handed to collectives (staging copies), and per
    // byte handed when the ranks span nodes (staging through host memory for the network
    // transport). 0 on datasheet profiles; `dtperf fit --runs` fits them. Not part of a
    // bare collective (`dtperf collective`, nccl-tests).
    double launch_s = 0.0;
    double tensor_s = 0.0;
    double host_s_per_byte = 0.0;
    double inter_host_s_per_byte = 0.0;
  } transport;

  struct Compute {
    DType dtype = DType::fp32;           // default compute dtype of this cluster
    double gemm_efficiency = 0.7;        // large-GEMM fraction of peak
    double half_efficiency_flops = 1e9;  // GEMM FLOPs at which efficiency is half of it
    double memory_efficiency = 0.8;      // achieved / datasheet memory bandwidth
    // Fraction of the dtype's peak that fused attention kernels (FlashAttention) reach; absent:
    // they run as the GEMMs of their size do.
    std::optional<double> fused_attention_efficiency;
    double kernel_overhead_s = 5e-6;     // fixed cost per layer and pass
    double interference_factor = 1.0;    // compute slow-down beside communication (1 + kappa)
    double comm_interference_factor = 1.0;  // communication slow-down beside compute
    double iteration_overhead_s = 0.0;   // fixed time per distributed iteration
    double cross_node_overhead_s = 0.0;  // and more when its communication crosses nodes
    bool runs_on_host = false;           // compute on the host CPU (CPU training)
    std::optional<double> compute_cv;    // measured iteration-time spread, if calibrated
  } compute;

  struct Calibration {
    std::vector<CollectiveTable> tables;
    std::vector<AlphaBetaFit> fits;
    std::vector<GemmEfficiencyCurve> gemm;
    std::optional<double> copy_bytes_per_s;
  } calibration;

  /// What a fit to measured training runs found for one model (`dtperf fit --runs`): the
  /// compute scales apply to that model only; the link, contention and overhead values it
  /// fitted are in the sections above.
  struct RunsFit {
    // The models the runs trained. Fitted on one model, the compute scales are that
    // model's (other models get the profile without them); fitted across several, they
    // are the cluster's, and apply to any model.
    std::vector<std::string> models;
    bool applies_to(const std::string& model) const {
      return models.size() > 1 || (models.size() == 1 && models.front() == model);
    }
    double forward_scale = 1.0;
    double backward_scale = 1.0;
    int runs = 0;
    double rms_error = 0.0;                   // of ln(predicted / measured)
    std::optional<double> loo_median_abs_error;
    std::optional<double> loo_max_abs_error;
    // How sure the fit is, for prediction bands (analysis/fit_runs.hpp): every parameter
    // it considered, in its fitting scale u (ln for scales, efficiencies and latencies),
    // their joint posterior covariance there and the model's own residual, a ln error no
    // parameter explains. Empty: a fit that recorded none (no band is given).
    struct Parameter {
      std::string name;     // analysis/fit_runs.hpp's RunParameter names
      bool log = true;      // natural = unit * (log ? exp(u) : u)
      double unit = 1.0;
      double u = 0.0;
      double low_u = 0.0;   // the range the fit searched
      double high_u = 0.0;
      // Where the true value lies on average from the profile's, in u: 0 for a fit (its
      // mode is the profile's value); a datasheet value's mean departure across measured
      // clusters (analysis/fit_runs.hpp, datasheet_uncertainty). Not written to a profile.
      double mean_u = 0.0;
    };
    std::vector<Parameter> parameters;
    std::vector<double> covariance;  // parameters.size() squared, row-major
    double model_sigma = 0.0;
  };
  std::optional<RunsFit> runs_fit;

  Provenance provenance;

  int ranks() const { return nodes * gpus_per_node; }
};

}  // namespace dtperf
