#include "dtperf/fit_note.hpp"

namespace dtperf {

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
