#pragma once
// How compute and communication slow each other while they overlap.
//
// Two sources, both as factors on the duration of what runs beside the other:
//   * the profile's contention (ComputeParams::interference_factor for compute,
//     comm_interference_factor for communication): GPU kernels of both kinds competing for
//     SMs and memory bandwidth ([NET]: compute ~15 % slower beside NCCL), fitted from runs;
//   * a host-driven transport's CPU work when compute itself runs on the host (CPU
//     training): the transfers across nodes keep a share s of the machine's cores busy
//     (NetworkParams::host_cpu_share: CPU time per byte x the achieved rate, per core).
//     The cores are shared in proportion to demand (processor sharing): compute wants every
//     core, the transport s of them, so both get 1 / (1 + s) of what they want and both run
//     x (1 + s) while they overlap. That conserves the cores' work: over a transfer of B
//     bytes that would take D alone, compute loses D (1 + s) x s / (1 + s) = s D of its
//     time, the transport's own CPU time. (Charging only compute, the transfer at full
//     speed, would have the two use more than all the cores.) On the emulated cluster of
//     validation/ the rule took the same 44 runs from a median error of 6.8 % (worst
//     22.8 %, every 1 Gbit/s run too fast) to 3.9 % (worst 16.4 %); README.md.
//
// Exchanges inside a node (the profile's intra-node link) and one-node jobs pay only the
// profile's factors. Pure functions of the profile.

#include "dtperf/compute.hpp"
#include "dtperf/network.hpp"

namespace dtperf {

struct Contention {
  double compute = 1.0;        // compute beside any exchange
  double compute_inter = 1.0;  // compute beside a transfer across nodes
  double comm_intra = 1.0;     // an exchange inside a node, beside compute
  double comm_inter = 1.0;     // a transfer across nodes, beside compute
  // (On one node the factors across nodes are the others: no transfer crosses.)
};

/// The factors for a job on `net` (all 1 on one rank: nothing overlaps).
inline Contention contention_beside_compute(const ComputeParams& c, const NetworkParams& net) {
  Contention k;
  if (net.ranks() <= 1) return k;
  const double host = c.runs_on_host && net.nodes > 1 ? 1.0 + net.host_cpu_share() : 1.0;
  k.compute = c.interference_factor;
  k.compute_inter = c.interference_factor * host;
  k.comm_intra = c.comm_interference_factor;
  k.comm_inter = c.comm_interference_factor * host;
  return k;
}

}  // namespace dtperf
