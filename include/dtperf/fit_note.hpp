// What a fit decided and why, as a value. The engine records the kind of decision and
// the numbers behind it; the io layer (io/fit_note_text.hpp) renders the sentence, so
// table, JSON and tests read one source and the engine holds no English.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "dtperf/cluster.hpp"
#include "dtperf/names.hpp"

namespace dtperf {

struct FitNote {
  enum class Kind : std::uint8_t {
    // GEMM efficiency curves (gemm_efficiency_curves)
    gemm_no_peak,     // dtype: points left out, the profile has no peak for it
    gemm_above_peak,  // dtype, points above peak_flops_per_s (best best_flops_per_s), clamped to 1
    // Link parameters derived from collective fits (derive_link_measurements)
    intra_bandwidth,            // bytes_per_s = busbw of all_reduce on `ranks` of one node
    intra_latency,              // latency_s = alpha_s / 2(ranks-1)
    nic_from_sendrecv,          // bytes_per_s = pair_bytes_per_s x max(concurrent, rails)
    nic_from_all_reduce,        // bytes_per_s = pair_bytes_per_s (busbw) x max(1, rails / (ranks/nodes))
    nic_intra_bound,            // all_reduce over nodes at busbw bytes_per_s >= 90 % of the one-node
                                // busbw limit_bytes_per_s: bound inside the node, NICs not derived
    inter_latency_sendrecv,     // latency_s = alpha of sendrecv across nodes
    inter_latency_pair_ring,    // latency_s = alpha_s / 2 of all_reduce on 2 ranks over 2 nodes
    inter_latency_ring,         // latency_s = (alpha_s - 2(ranks-nodes) intra_latency_s) / 2(nodes-1)
    inter_latency_not_derived,  // the same formula is <= 0: kept at the previous value
    // Measured links against known rates (apply_link_measurements)
    intra_above_link_rate,  // bytes_per_s > limit_bytes_per_s: the rate is raised to it
    intra_rate_unknown,     // bandwidth = measured, efficiency 1
    nic_above_line_rate,    // bytes_per_s > nics x nic_gbps = limit_bytes_per_s: efficiency 1
    nic_rate_unknown,       // nic_gbps = bytes_per_s / nics, efficiency 1
    // Guardrails (link_warnings, gemm_warnings): measurements their hardware cannot explain
    intra_above_ring_ceiling,  // busbw bytes_per_s > 85 % of the link rate limit_bytes_per_s
    nic_above_ceiling,         // bytes_per_s > nics x line rate = limit_bytes_per_s
    nic_two_node_inflated,     // the same, from all_reduce on `ranks` > 2 over 2 nodes: tree or NVLS
    intra_far_below,           // bytes_per_s < half of the ring ceiling limit_bytes_per_s
    nic_far_below,             // bytes_per_s < half of the wire ceiling limit_bytes_per_s
    gemm_far_below,            // dtype: best efficiency `error` < half the profile's assumed one
    // Fits to measured runs (fit_runs)
    network_instead_of_compute,  // compute could not explain the runs; the network term was fitted
    run_not_explained,           // run `run_label` is off by `error` (> 10 %) after the fit
    wider_than_local,            // `parameter` fits the runs within two standard errors of the best
                                 // fit as far as `other_value` from its fitted `value` (natural
                                 // units), beyond its local interval
    profile_not_scanned,         // `points` pinned parameters not profiled to the end (the fit's time)
  };
  Kind kind = Kind::gemm_no_peak;
  DType dtype = DType::fp32;
  int points = 0;
  int ranks = 0;
  int nodes = 0;
  int concurrent = 0;  // groups of a shape that ran at once on each node
  int rails = 0;
  int nics = 0;
  double peak_flops_per_s = 0.0;
  double best_flops_per_s = 0.0;
  double bytes_per_s = 0.0;       // the derived (or measured) rate
  double pair_bytes_per_s = 0.0;  // the rate it was derived from
  double limit_bytes_per_s = 0.0;
  double nic_gbps = 0.0;
  double latency_s = 0.0;  // the derived latency
  double alpha_s = 0.0;    // the fitted alpha it came from
  double intra_latency_s = 0.0;
  // Set when the sweep behind a bandwidth stopped below 256 MiB: the largest size (the
  // bandwidth may still be rising beyond it).
  std::optional<double> sweep_max_bytes;
  bool intra_measured = false;  // nic_far_below: a one-node all_reduce was fitted alongside
  double assumed_efficiency = 0.0;  // the profile's large-GEMM efficiency (gemm_far_below)
  std::string run_label;
  double error = 0.0;  // predicted / measured - 1
  std::string parameter;     // wider_than_local: the parameter's name (RunParameter)
  double value = 0.0;        // its fitted value, natural units
  double other_value = 0.0;  // the farthest value within two standard errors
};
template <>
struct EnumNames<FitNote::Kind> {
  static constexpr Named<FitNote::Kind> table[] = {
      {FitNote::Kind::gemm_no_peak, "gemm_no_peak"},
      {FitNote::Kind::gemm_above_peak, "gemm_above_peak"},
      {FitNote::Kind::intra_bandwidth, "intra_bandwidth"},
      {FitNote::Kind::intra_latency, "intra_latency"},
      {FitNote::Kind::nic_from_sendrecv, "nic_from_sendrecv"},
      {FitNote::Kind::nic_from_all_reduce, "nic_from_all_reduce"},
      {FitNote::Kind::nic_intra_bound, "nic_intra_bound"},
      {FitNote::Kind::inter_latency_sendrecv, "inter_latency_sendrecv"},
      {FitNote::Kind::inter_latency_pair_ring, "inter_latency_pair_ring"},
      {FitNote::Kind::inter_latency_ring, "inter_latency_ring"},
      {FitNote::Kind::inter_latency_not_derived, "inter_latency_not_derived"},
      {FitNote::Kind::intra_above_link_rate, "intra_above_link_rate"},
      {FitNote::Kind::intra_rate_unknown, "intra_rate_unknown"},
      {FitNote::Kind::nic_above_line_rate, "nic_above_line_rate"},
      {FitNote::Kind::nic_rate_unknown, "nic_rate_unknown"},
      {FitNote::Kind::network_instead_of_compute, "network_instead_of_compute"},
      {FitNote::Kind::run_not_explained, "run_not_explained"},
      {FitNote::Kind::wider_than_local, "wider_than_local"},
      {FitNote::Kind::profile_not_scanned, "profile_not_scanned"},
      {FitNote::Kind::intra_above_ring_ceiling, "intra_above_ring_ceiling"},
      {FitNote::Kind::nic_above_ceiling, "nic_above_ceiling"},
      {FitNote::Kind::nic_two_node_inflated, "nic_two_node_inflated"},
      {FitNote::Kind::intra_far_below, "intra_far_below"},
      {FitNote::Kind::nic_far_below, "nic_far_below"},
      {FitNote::Kind::gemm_far_below, "gemm_far_below"},
  };
};


/// Whether a note is a guardrail warning (a measurement to check before trusting the fit).
bool fit_note_is_warning(FitNote::Kind kind);

}  // namespace dtperf
