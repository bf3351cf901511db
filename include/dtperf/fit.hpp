#pragma once
// Fitting calibration measurements into profile parameters: piecewise alpha-beta fits of
// collectives, the GEMM efficiency curve, copy bandwidth, iteration spread, and the link
// parameters a profile needs, derived from the fits. Pure and deterministic: no I/O, no
// clock; invalid arguments (programming errors) throw std::invalid_argument.
//
// The alpha-beta model. One call of a collective on `bytes` takes
//   t(bytes) = alpha + beta * bytes,   bus bandwidth = bus_factor / beta,
// where bus_factor is nccl-tests' busbw/algbw: 2(n-1)/n for all_reduce, (n-1)/n for
// all_gather, reduce_scatter and alltoall, 1 for sendrecv, broadcast and reduce.
//
// Criterion. Measured times span six orders of magnitude, so the fit minimises the sum
// of squared relative errors, sum(((alpha + beta*b_i) - t_i) / t_i)^2: a weighted least
// squares problem with weights 1/t_i^2, solved per segment with Eigen's column-pivoting
// QR on column-scaled rows [1/t_i, b_i/t_i] against 1. Each segment is constrained to
// alpha >= 0 and beta >= min_seconds_per_byte (> 0): the problem is a convex quadratic
// over a quadrant, so its minimum is the unconstrained one when feasible, else the best
// of the one-dimensional fits on the boundaries alpha = 0 and beta = min (clamped), which
// is exact. A segment pinned at the beta bound is latency-only: its bus bandwidth
// (bus_factor / min) is a large placeholder, not a measurement.
//
// Segments. NCCL switches protocol (LL, LL128, Simple), algorithm and channel count with
// the size, and each regime has its own alpha and beta. Sizes are sorted and cut into k
// contiguous segments of at least `min_points_per_segment` sizes each (default 2, what a
// line needs), k <= max_segments (default 6). Six is the number of regimes NCCL's tuner
// chooses among for an all-reduce without NVLS or CollNet: two algorithms (ring, tree)
// times three protocols (NCCL src/graph/tuning.cc, NCCL_NUM_PROTOCOLS; each (algorithm,
// protocol) pair has its own latency and bandwidth there, and the tuner runs the fastest
// at each size, so in its model the curve is the lower envelope of up to six lines).
// Measured mid sizes depart from that envelope (NCCL corrects its own tree model size by
// size there), so segments are not held to one: held to bandwidth rising with size, the
// median held-out log went from 3.5 to 4.3 % (docs/VALIDATION.md). The
// bound was 4 before, fewer than the regimes: fitted on every other size, 18 of the 19
// published logs with sizes enough for 6 segments took all 4; at 6, 5 of them take fewer
// (tests/test_validation_nccl.cpp prints the count per log; docs/VALIDATION.md the scores).
// Dynamic programming over the sorted sizes finds, for every k, the cut that minimises
// the total squared relative error SSE_k. The number of segments is then chosen by the
// Bayesian information criterion with a noise floor:
//   score(k) = N ln(SSE_k / N + noise_floor^2) + (3k - 1) ln N
// (3k - 1 parameters: alpha and beta per segment and k - 1 breakpoints). The smallest
// score wins, fewer segments on a tie. The noise floor (default 0.1 %, the printing
// precision of nccl-tests' times) keeps exact synthetic data from splitting without need;
// an extra segment must divide the mean squared error by at least exp(3 ln N / N) (1.35
// for N = 36 sizes), so segments follow regime changes rather than noise of that size; a
// log that scatters by more gets segments for its scatter (docs/CALIBRATION.md shows one).
//
// Outliers. Interference (another job, the first call's set-up) only ever slows a
// measurement, and more bytes never take less time (a protocol or channel switch makes
// a larger size at most slightly faster). A size that took more than `outlier_factor`
// (1.5) times as long as some larger size is an outlier: it is left out of the fit and
// marked in the residuals. The RMS error is over the points fitted, the worst-fitting
// list over all. (The largest size has nothing to be compared with.)
//
// Prediction. A size inside a segment's [min_bytes, max_bytes] uses that segment; sizes
// below the first or above the last segment extend those. A size in the gap between two
// segments takes the faster of the two lines (NCCL's tuner picks the faster regime), but
// no less than the log-log chord between the two segments' ends: neither line was
// measured in the gap, and a regime's line carried past its sizes can dive far below both
// ends (b200 all_gather: 16 MiB's segment carried to 64 MiB gives 711 us, the chord 906 us,
// the measurement 1,282 us). On the 19 published nccl-tests logs, fitted on every other
// size, the chord floor took the median held-out error from 4.3 % to 3.6 % and the worst
// log's from 31.7 % to 16.5 % (tests/test_validation_nccl.cpp).
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dtperf/cluster.hpp"
#include "dtperf/fit_note.hpp"

namespace dtperf {

/// nccl-tests' busbw/algbw factor for `collective` on `ranks` ranks; nullopt for a
/// collective nccl-tests does not define one for. Ranks must be >= 1.
std::optional<double> bus_factor(std::string_view collective, int ranks);

struct SizeTime {
  double bytes = 0.0;
  double time_s = 0.0;
};

struct FitOptions {
  int max_segments = 6;            // NCCL's (algorithm, protocol) pairs; see Segments
  int min_points_per_segment = 2;
  double noise_floor = 1e-3;              // relative; see the criterion above
  double min_seconds_per_byte = 1e-15;    // beta bound: 1e6 GB/s of bus bandwidth
  double outlier_factor = 1.5;            // <= 1 disables outlier removal
};

struct PointResidual {
  double bytes = 0.0;
  double time_s = 0.0;
  double predicted_s = 0.0;
  double relative_error = 0.0;  // (predicted - measured) / measured
  bool outlier = false;         // left out of the fit (see Outliers above)
};

struct CollectiveFit {
  AlphaBetaFit fit;  // segments by size; rms_relative_error over the points fitted
  double bus_factor = 1.0;
  std::vector<PointResidual> residuals;  // one per point, by size
  std::vector<PointResidual> worst;      // the (up to) 3 largest |relative error|, worst first
};

/// Fits `points` (any order, distinct positive sizes, positive times, at least 2) of one
/// collective on `ranks` ranks over `nodes` nodes. `level` is "intra" for one node,
/// else "inter".
CollectiveFit fit_collective(const std::string& collective, int ranks, int nodes,
                             std::span<const SizeTime> points, const FitOptions& options = {});

/// The fitted time of `bytes` (see Prediction above).
double fit_time_s(const AlphaBetaFit& fit, double bytes);

/// Whether `segment` of a fit with `bus_factor` is pinned at the beta bound: its time does
/// not grow with the size, and its bus bandwidth is the bound's placeholder.
bool latency_only(const AlphaBetaSegment& segment, double bus_factor, const FitOptions& options = {});

/// How well a fit predicts measured points of at least `min_bytes`.
struct PredictionErrors {
  int points = 0;
  double geomean = 0.0;  // exp(mean |ln(predicted / measured)|) - 1
  double worst = 0.0;    // max |predicted / measured - 1|
  double worst_bytes = 0.0;
};
PredictionErrors prediction_errors(const AlphaBetaFit& fit, std::span<const SizeTime> points,
                                   double min_bytes = 0.0);

/// How far to trust a fit: fitted on every other size (the smallest, the third, ...), the
/// sizes in between predicted. nullopt with fewer than 3 sizes (2 to fit, 1 to predict).
struct HoldoutErrors {
  int fitted = 0;              // sizes fitted
  PredictionErrors held_out;   // over every held-out size
  PredictionErrors large;      // over the held-out sizes of at least 1 MiB
};
std::optional<HoldoutErrors> holdout_errors(const std::string& collective, int ranks, int nodes,
                                            std::span<const SizeTime> points, const FitOptions& options = {});

// ---- Compute --------------------------------------------------------------------------

struct GemmPoint {
  DType dtype = DType::fp32;
  double flops = 0.0;
  double time_s = 0.0;
};

/// One curve per dtype that has a peak: efficiency = flops / time / peak, sorted by
/// FLOPs; points of equal FLOPs (other shapes) are averaged; efficiencies above 1 (a
/// peak set too low) are clamped to 1. With `monotone`, the curve is replaced by its
/// least-squares non-decreasing fit (pool adjacent violators, weighted by the number of
/// points merged): the model looks efficiency up by FLOPs alone and cannot predict the
/// wave-quantization dips of particular shapes. Notes say what was dropped or clamped.
std::vector<GemmEfficiencyCurve> gemm_efficiency_curves(std::span<const GemmPoint> points,
                                                        const std::map<DType, double>& peak_flops_per_s,
                                                        bool monotone, std::vector<FitNote>& notes);

struct CopyPoint {
  double bytes = 0.0;
  double time_s = 0.0;  // for bytes read + written
};
/// Sustained device memory traffic: the median rate of the points of at least half the
/// largest size (small copies do not reach the sustained rate). nullopt without points.
std::optional<double> copy_bandwidth_bytes_per_s(std::span<const CopyPoint> points);

/// Iteration-time spread: the median of the ranks' coefficients of variation (the
/// typical rank; one slow rank shows as imbalance, not as spread). nullopt when empty.
std::optional<double> iteration_cv(std::span<const double> per_rank_cv);

// ---- Link parameters ------------------------------------------------------------------

/// One fitted collective on one group shape. `group` names the shape as the raw
/// calibration format does: "node" (all ranks of one node), "world", "one_per_node",
/// "pair_intra", "pair_inter", "two_nodes". `concurrent_per_node` counts the groups of
/// this shape that ran at once on each node (sharing its NICs).
struct GroupFit {
  std::string group;
  int concurrent_per_node = 1;
  AlphaBetaFit fit;
};

/// Link parameters as the engine uses them (network.hpp), measured.
struct LinkMeasurements {
  std::optional<double> intra_bytes_per_s;     // achieved per GPU and direction
  std::optional<double> intra_latency_s;       // per ring step inside a node
  std::optional<double> node_nic_bytes_per_s;  // achieved by all NICs of a node, per direction
  std::optional<double> inter_latency_s;       // per hop between nodes
  std::vector<FitNote> notes;                  // how each value was derived
};

/// What the derivation needs besides the fits.
struct LinkContext {
  int gpus_per_node = 1;                        // G of the cluster
  std::optional<int> nics_per_node;             // K, when known (base profile or command line)
  std::optional<double> known_intra_latency_s;  // from a base profile
};

/// Derives link parameters from fits by inverting the engine's model (network.hpp). An
/// alpha counts as a latency only if its segment starts at 64 KiB or below (a sweep from
/// 1 MiB has no latency-bound sizes); bandwidths come from the largest-size segment.
/// - intra: the all_reduce on one node with the most ranks (p). A ring moves 2(p-1)/p * S
///   per GPU and direction, so its bus bandwidth is the link's achieved rate:
///   intra_bytes_per_s = busbw; its latency is 2(p-1) steps: intra_latency_s = alpha / 2(p-1).
/// - NIC throughput of a node: from pair_inter sendrecv fits, the best over the measured
///   concurrencies c of per-pair busbw x max(c, rails), rails = min(G, K) (1 when K is
///   unknown). In the engine c crossing ranks each get min(rank cap, node / c) with the
///   rank cap = node / rails, so this inverts it: with c >= rails it is the concurrent
///   pairs x per-pair busbw; a single pair measures one rail of the node. Else from the
///   multi-node all_reduce with the most ranks (r per node): its ring busbw is the NICs'
///   rate for the group, min(r / rails, 1) x the node's, so node = busbw x max(1, rails / r).
///   That ring also crosses every GPU's intra-node link, so its busbw is at most the
///   one-node busbw: where a one-node all_reduce was fitted too and the multi-node busbw
///   reaches kIntraBoundFraction of it, the ring was bound inside the node (a PCIe-only
///   node) and says nothing about the NICs: they are not derived (note nic_intra_bound),
///   the base profile's stay.
/// - inter latency per hop: the pair_inter sendrecv alpha (one message, one hop; lowest
///   concurrency); else a 2-rank all_reduce over 2 nodes, alpha / 2 (two ring steps); else
///   the multi-node all_reduce with the most ranks through the ring formula
///   alpha = (2(p-1) - c) * intra_latency + c * inter_latency, c = ring_node_crossings
///   (allreduce_ring_steps, network.hpp: ceil(2(p-1) / (p/m)) of the 2(p-1) steps cross nodes), with the intra latency
///   measured above, else the known one, else 0, clamped at 0. Each derived value
///   reproduces, in the engine, the measurement it came from.
LinkMeasurements derive_link_measurements(std::span<const GroupFit> fits, const LinkContext& context = {});

/// What is known about the links before measuring (from a base profile or the command
/// line): the intra-node link rate and the NIC line rate make efficiencies possible.
struct KnownLinks {
  std::optional<double> intra_link_bytes_per_s;
  std::optional<int> nics_per_node;
  std::optional<double> nic_gbps;
};

/// Writes the measured values into `profile`:
/// - intra: with a known link rate, efficiency = measured / rate (when the measurement
///   exceeds the rate, the rate is raised to it and efficiency is 1, with a note); else
///   bandwidth = measured and efficiency 1.
/// - NICs: nics_per_node = known or the profile's; with a known line rate,
///   transport_efficiency = measured / (nics * line rate), clamped to 1 with a note (tree
///   or NVLS all-reduce can beat the ring's NIC bound); else nic_gbps = measured / nics
///   and efficiency 1, with a note that the line rate is unknown.
/// - latencies: copied.
/// Notes are appended to `notes`.
void apply_link_measurements(ClusterProfile& profile, const LinkMeasurements& measured,
                             const KnownLinks& known, std::vector<FitNote>& notes);

// ---- Guardrails -----------------------------------------------------------------------
//
// Measurements that the hardware they ran on cannot explain, as warnings, and the user
// learns what to check. Against known rates only (a base profile, --nic-gbps). Above a
// ceiling the fit keeps them (they are what was measured: a faster algorithm, or a rate
// stated too low); far below it, the level is not fitted unless the user insists
// (FitSettings::keep_degraded): such a run measures a fault, not the cluster.
// - A ring over NVLink (or PCIe) reaches about 80 % of the link rate (oci-a100's busbw:
//   234 of 300 GB/s); above 85 % the all-reduce did not run as a ring over those links:
//   NVLS (NVLink SHARP) reduced in the switches (aws-p5's 8 H100: 485 of 450 GB/s), or
//   the stated rate is wrong.
// - RDMA reaches 96-98 % of a NIC's line rate (one DGX H100 rail: 49.1 GB/s of 50);
//   more than the line rate cannot cross the NICs: NVLS or tree all-reduce, or more NICs
//   or a faster line than stated.
// - On 2 nodes with several GPUs each that is the rule, not the exception: NCCL's tree
//   (and NVLS tree) sends each byte across once where a ring sends it 2(p-1)/p times, so
//   busbw overstates the NICs by up to 2x (dgxh100 2 x 8: 489 GB/s through 8 x 400
//   Gbit/s); a sendrecv across nodes measures them (dtperf-calibrate does).
// - Below half of those ceilings the run is far below its hardware: NCCL over sockets
//   instead of RDMA, fewer NICs or GPUs in use than stated, or a sweep that stopped
//   before the bandwidth (the notes give the largest size).
constexpr double kRingLinkCeiling = 0.85;
/// A multi-node ring at 90 % or more of the one-node busbw is bound inside the node: the
/// tenth allows for the published logs' run-to-run spread (the Azure A100 logs' busbw
/// agrees with their times within 2 %) and for a longer ring's extra steps.
constexpr double kIntraBoundFraction = 0.9;
constexpr double kRdmaWireCeiling = 1.0;
constexpr double kFarBelowFraction = 0.5;

std::vector<FitNote> link_warnings(const LinkMeasurements& measured, const KnownLinks& known,
                                   int profile_nics_per_node);

/// GEMMs: a dtype whose best measured efficiency (curves from gemm_efficiency_curves) is
/// below half the efficiency the profile assumes for large GEMMs (its datasheet
/// `gemm_efficiency`): tensor cores not used (TF32 off, an unaligned shape), clocks held
/// down, or another job on the GPU.
std::vector<FitNote> gemm_warnings(std::span<const GemmEfficiencyCurve> curves,
                                   const std::map<DType, double>& peak_flops_per_s, double assumed_efficiency);

// ---- A calibration fit as a whole ---------------------------------------------------

/// One measured series: a collective on one group shape over sizes, from a raw
/// calibration file or an nccl-tests log.
struct MeasuredSeries {
  std::string file;
  std::string where;  // JSON pointer in a raw file; "" for a log
  std::string collective;
  std::string group;
  int ranks = 0;
  int nodes = 0;
  int concurrent_per_node = 1;
  std::vector<SizeTime> points;
};

/// What `dtperf fit` made of its inputs (io/calibrated_profile.hpp assembles it).
struct FitOutcome {
  ClusterProfile profile;
  std::vector<MeasuredSeries> series;
  std::vector<CollectiveFit> fits;  // one per series
  LinkMeasurements links;
  std::vector<std::string> notes;   // also in the profile's provenance notes
  std::vector<std::string> warnings;  // guardrails (fit.hpp): measurements to check; also there
};

}  // namespace dtperf
