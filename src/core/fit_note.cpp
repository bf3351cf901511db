#include "dtperf/fit_note.hpp"

namespace dtperf {

const char* fit_note_name(FitNote::Kind kind) {
  switch (kind) {
    case FitNote::Kind::gemm_no_peak: return "gemm_no_peak";
    case FitNote::Kind::gemm_above_peak: return "gemm_above_peak";
    case FitNote::Kind::intra_bandwidth: return "intra_bandwidth";
    case FitNote::Kind::intra_latency: return "intra_latency";
    case FitNote::Kind::nic_from_sendrecv: return "nic_from_sendrecv";
    case FitNote::Kind::nic_from_all_reduce: return "nic_from_all_reduce";
    case FitNote::Kind::inter_latency_sendrecv: return "inter_latency_sendrecv";
    case FitNote::Kind::inter_latency_pair_ring: return "inter_latency_pair_ring";
    case FitNote::Kind::inter_latency_ring: return "inter_latency_ring";
    case FitNote::Kind::inter_latency_not_derived: return "inter_latency_not_derived";
    case FitNote::Kind::intra_above_link_rate: return "intra_above_link_rate";
    case FitNote::Kind::intra_rate_unknown: return "intra_rate_unknown";
    case FitNote::Kind::nic_above_line_rate: return "nic_above_line_rate";
    case FitNote::Kind::nic_rate_unknown: return "nic_rate_unknown";
    case FitNote::Kind::network_instead_of_compute: return "network_instead_of_compute";
    case FitNote::Kind::run_not_explained: return "run_not_explained";
    case FitNote::Kind::intra_above_ring_ceiling: return "intra_above_ring_ceiling";
    case FitNote::Kind::nic_above_ceiling: return "nic_above_ceiling";
    case FitNote::Kind::nic_two_node_inflated: return "nic_two_node_inflated";
    case FitNote::Kind::intra_far_below: return "intra_far_below";
    case FitNote::Kind::nic_far_below: return "nic_far_below";
    case FitNote::Kind::gemm_far_below: return "gemm_far_below";
  }
  return "?";
}

bool fit_note_is_warning(FitNote::Kind kind) {
  switch (kind) {
    case FitNote::Kind::intra_above_ring_ceiling:
    case FitNote::Kind::nic_above_ceiling:
    case FitNote::Kind::nic_two_node_inflated:
    case FitNote::Kind::intra_far_below:
    case FitNote::Kind::nic_far_below:
    case FitNote::Kind::gemm_far_below: return true;
    default: return false;
  }
}

}  // namespace dtperf
