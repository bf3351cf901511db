#pragma once
// How compute and communication slow each other while they overlap.
//
// Two sources, both as factors on the duration of what runs beside the other:
//   * the profile's contention (ComputeParams::interference_factor for compute,
//     comm_interference_factor for communication): GPU kernels of both kinds competing for
//     SMs and memory bandwidth ([NET]: compute ~15 % slower beside NCCL), fitted from runs;
//   * a host-driven transport's CPU work when compute itself runs on the host (CPU
//     training): an exchange costs the cores its CPU time per byte
//     (NetworkParams::host_cpu_s_per_byte_sent) x the bytes each rank sends, inside its
//     node (loopback sockets, shared-memory copies: the host's work as well) and across
//     nodes. Spread over the exchange's duration D alone, it keeps a share
//         s = cpu_s_per_byte x bytes_sent_per_rank / D
//     of a rank's cores busy. Compute loses that CPU time, s D, whoever waits: the cores'
//     work is conserved. How the loss falls between the two sides is a second, separately
//     measured quantity, the share w of its own CPU time the exchange waits for
//     (NetworkParams::host_exchange_share, 0 to 1):
//         the exchange beside compute lasts  D x, x = max(1 + w s, s),
//         compute beside it runs             x / (x - s) times slower,
//     so that over the exchange's D x compute makes D x - s D of progress. w = 1 is
//     processor sharing (both run x (1 + s); the default, which a profile without the
//     measurement keeps); w = 0 serves the transport first (the kernel wakes its threads
//     on each packet ahead of a computing one), the exchange at its own speed unless its
//     CPU time exceeds its duration (x = s > 1: then compute stalls while it runs). The
//     validation harness measures both beside each other, blind to training times: the
//     compute lost per byte sent and the exchanges' own stretch, from which w
//     (validation/train.py, compute_beside_exchanges). On its emulated cluster (two full
//     grids, docs/VALIDATION.md) the exchanges beside compute took 0.98-1.04x their time
//     alone on 2 and 4 nodes of one rank at 100 Mbit/s, up to 1.54x at 1 Gbit/s and 1.83x
//     with four ranks on two cores; the share that fits each cell ran from 0.04 to 0.87
//     (median 0.34): neither w = 1 nor w = 0 fits every cell.
//     An exchange's latency costs no CPU: the share is its CPU time over its whole
//     duration, latency included, during which the cores are idle while the bytes are on
//     the wire. Exchanges in flight on both link levels at once (gossip: one inside the
//     node, one across) add their shares while both run, and each only until its own end
//     (the two-window stretched_compute_s, compute.hpp). Two ways to get the share wrong,
//     both tried on the emulated cluster: the streaming share (CPU per byte x the link's
//     rate) over the whole duration charges an exchange's latency as CPU time
//     (decentralized runs on 4 nodes x 1 rank at 1 Gbit/s and 2 ms were 9-12 % too slow);
//     and counting only the bytes across nodes, per node, charges a rank for its node's
//     other ranks and nothing for its exchanges inside the node.
//
// Pure functions of the profile.

#include <algorithm>
#include <limits>

#include "dtperf/compute.hpp"
#include "dtperf/network.hpp"

namespace dtperf {

struct Contention {
  double compute = 1.0;     // compute beside any exchange (the profile's factor)
  double comm = 1.0;        // any exchange beside compute (the profile's factor)
  // A host transport's CPU time per byte sent, where it competes with compute (compute
  // on the host, several ranks); 0 otherwise.
  double host_cpu_s_per_byte = 0.0;
  // The share of that CPU time an exchange itself waits for beside compute: 1 processor
  // sharing, 0 served first (see above).
  double host_exchange_share = 1.0;

  /// The share of the cores an exchange of `cost` on a group of `ranks_per_node` ranks per
  /// node keeps busy over `time_s`, its duration alone: the CPU time of the bytes each
  /// rank sends (inside its node and across) over that duration.
  double host_share(const CollectiveCost& cost, int ranks_per_node, double time_s) const {
    const double sent_per_rank = cost.intra_bytes_per_rank + cost.inter_bytes_per_node / ranks_per_node;
    return time_s > 0.0 ? host_cpu_s_per_byte * sent_per_rank / time_s : 0.0;
  }
  /// The share of the cores compute keeps while an exchange of host share `share` runs,
  /// per unit of the exchange's duration alone: x - s = 1 - (1 - w) s, or 0 where the
  /// transport's CPU time outlasts its link time (x = s). Written so that w = 1 gives 1
  /// exactly.
  double host_compute_progress(double share) const {
    return std::max(0.0, 1.0 - (1.0 - host_exchange_share) * share);
  }
  /// An exchange's stretch beside compute from its host share alone: x = max(1 + w s, s).
  double host_exchange_stretch(double share) const {
    return host_compute_progress(share) > 0.0 ? 1.0 + host_exchange_share * share : share;
  }
  /// Compute beside exchanges of host share `share` (summed over those in flight
  /// together): x / (x - s) = 1 + s / (x - s); +infinity where the transport takes every
  /// core while it runs (stretched_compute_s then makes no progress until it ends).
  double compute_beside(double share) const {
    if (share <= 0.0) return compute;
    const double progress = host_compute_progress(share);
    return progress > 0.0 ? compute * (1.0 + share / progress) : std::numeric_limits<double>::infinity();
  }
  /// An exchange of host share `share` beside compute.
  double exchange_beside_compute(double share) const { return comm * host_exchange_stretch(share); }
};

/// The factors for a job on `net` (all 1 on one rank: nothing overlaps).
inline Contention contention_beside_compute(const ComputeParams& c, const NetworkParams& net) {
  Contention k;
  if (net.ranks() <= 1) return k;
  k.compute = c.interference_factor;
  k.comm = c.comm_interference_factor;
  if (c.runs_on_host) {
    k.host_cpu_s_per_byte = net.host_cpu_s_per_byte_sent();
    k.host_exchange_share = net.host_exchange_share;
  }
  return k;
}

}  // namespace dtperf
