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
//     of a rank's cores busy. The cores are shared in proportion to demand (processor
//     sharing): compute wants every core, the transport s of them, so both get 1 / (1 + s)
//     of what they want and both run x (1 + s) while they overlap. That conserves the
//     cores' work: compute loses D (1 + s) x s / (1 + s) = s D of its time, the
//     exchange's own CPU time, however much of D is latency (the link's delay,
//     handshakes), during which the cores are idle while the bytes are on the wire.
//     Charging only compute, the transfer at full speed, would have the two use more than
//     all the cores. Exchanges in flight on both link levels at once (gossip: one inside
//     the node, one across) add their shares while both run, and each only until its own
//     end (the two-window stretched_compute_s, compute.hpp). The validation harness
//     measures the CPU time per byte over all the bytes its ranks send
//     (validation/harness.py). Two ways to get it wrong, both tried
//     on its emulated cluster: the streaming share (CPU per byte x the link's rate) over
//     the whole duration charges an exchange's latency as CPU time (decentralized runs on
//     4 nodes x 1 rank at 1 Gbit/s and 2 ms were 9-12 % too slow); and counting only the
//     bytes across nodes, per node, charges a rank for its node's other ranks and nothing
//     for its exchanges inside the node.
//
// Pure functions of the profile.

#include "dtperf/compute.hpp"
#include "dtperf/network.hpp"

namespace dtperf {

struct Contention {
  double compute = 1.0;     // compute beside any exchange (the profile's factor)
  double comm = 1.0;        // any exchange beside compute (the profile's factor)
  // A host transport's CPU time per byte sent, where it competes with compute (compute
  // on the host, several ranks); 0 otherwise.
  double host_cpu_s_per_byte = 0.0;

  /// The share of the cores an exchange of `cost` on a group of `ranks_per_node` ranks per
  /// node keeps busy over `time_s`, its duration alone: the CPU time of the bytes each
  /// rank sends (inside its node and across) over that duration.
  double host_share(const CollectiveCost& cost, int ranks_per_node, double time_s) const {
    const double sent_per_rank = cost.intra_bytes_per_rank + cost.inter_bytes_per_node / ranks_per_node;
    return time_s > 0.0 ? host_cpu_s_per_byte * sent_per_rank / time_s : 0.0;
  }
  /// Compute beside exchanges of host share `share` (summed over those in flight together).
  double compute_beside(double share) const { return compute * (1.0 + share); }
  /// An exchange of host share `share` beside compute.
  double exchange_beside_compute(double share) const { return comm * (1.0 + share); }
};

/// The factors for a job on `net` (all 1 on one rank: nothing overlaps).
inline Contention contention_beside_compute(const ComputeParams& c, const NetworkParams& net) {
  Contention k;
  if (net.ranks() <= 1) return k;
  k.compute = c.interference_factor;
  k.comm = c.comm_interference_factor;
  if (c.runs_on_host) k.host_cpu_s_per_byte = net.host_cpu_s_per_byte_sent();
  return k;
}

}  // namespace dtperf
