#pragma once
// The network model: resolved link parameters and the cost of collectives on a group
// of ranks, in the alpha-beta form of NCCL's own tuning model (src/graph/tuning.cc),
// with three changes to it: the GPUs of one node share the node's NICs; a ring's latency
// counts the node crossings on its slowest chunk's path, ceil(steps / ranks per node),
// where NCCL's model counts 2(m - 1) for an all-reduce whatever the ranks per node
// (ring_node_crossings below); and measured tables, when the profile has them, correct
// the formula size by size: exactly at the shape they were measured on, and by the same
// ratio at the other shapes of their level (network.cpp, "Measured tables").
//
// Conventions. A group spans `nodes` nodes with `ranks_per_node` ranks on each. Link
// bandwidths are per direction. Bytes are the message size S of the collective; the
// wire carries S / compression_ratio. All functions here are pure.
#include <cstdint>
#include <span>
#include <string>

#include "dtperf/cluster.hpp"
#include "dtperf/names.hpp"

namespace dtperf {

enum class Algorithm : std::uint8_t { automatic, ring, tree, hierarchical };
template <>
struct EnumNames<Algorithm> {
  static constexpr Named<Algorithm> table[] = {
      {Algorithm::automatic, "auto"},
      {Algorithm::ring, "ring"},
      {Algorithm::tree, "tree"},
      {Algorithm::hierarchical, "hierarchical"},
  };
};

/// Linear interpolation in a measured (bytes, seconds) table, clamped at both ends,
/// as [NET] uses for the GPU vector-add (reduction) cost. Points sorted by bytes.
struct ReductionCost {
  std::span<const std::pair<double, double>> bytes_and_time_s;
  double time_s(double bytes) const;
  bool empty() const { return bytes_and_time_s.empty(); }
};

struct NetworkParams {
  int nodes = 1;
  int gpus_per_node = 1;
  double intra_bytes_per_s = 1.0;       // per GPU per direction, achieved
  double intra_latency_s = 0.0;
  int nics_per_node = 1;
  double nic_line_bytes_per_s = 1.0;    // one NIC, line rate
  double transport_efficiency = 1.0;
  // Ceiling of a host-driven transport (TCP sockets: the CPU copies and checksums every
  // byte), per node; 0 for none (RDMA). It acts as a time per byte added to the wire's:
  //   achieved = 1 / (1 / (K x line x efficiency) + 1 / host)
  // so a slow link is wire-bound and a fast one CPU-bound, as [NET] measured: TCP used
  // 9-31 % of 100 Gbit/s but nearly all of 1-10 Gbit/s.
  double host_bytes_per_s = 0.0;
  // CPU time the host spends per byte sent across nodes (its stack, copies and whatever
  // forwards the packets), measured where it is known; 0: taken as 1 / host_bytes_per_s.
  double host_cpu_s_per_byte = 0.0;
  // How much of that CPU time an exchange itself waits for beside compute (contention.hpp).
  double host_exchange_share = 1.0;
  // Flows of several groups crossing nodes through the same NICs at once reach this
  // fraction of what one flow reaches alone, together (group_nic_bytes_per_s): each
  // connection's congestion control probes for the rate the others hold, and they lose
  // some of it to one another (measured on the emulated cluster as two streams at once
  // against one, validation/netns.py; under BBR two flows reached 4-10 % less than one).
  // 1: they share the NICs without loss. One group's ring leaves a node as one flow, and a
  // rank's own collectives in flight on its link (collectives_in_flight) are not priced
  // with it: both keep the full rate.
  double shared_nic_efficiency = 1.0;
  double inter_latency_s = 0.0;
  // The collective library's ring moves in lockstep (ClusterProfile::Transport): every
  // step waits for the slowest hop, so a ring spanning nodes pays the inter-node latency
  // on all its steps (ring_step_latency_s). false: NCCL's pipelined chunks.
  bool lockstep_ring = false;
  // How many collectives one process group runs at once, every group on its own threads
  // (gloo: 2 per group), so that the exchanges in flight on a rank's link share it fairly
  // (gossip.cpp, "shared link"). 0: one stream per link level, exchanges one after
  // another in launch order (NCCL's stream per process group, as dtperf has long priced it).
  int collectives_in_flight = 0;
  // A training framework's host work around its collectives (ClusterProfile::Transport):
  // launch_s per collective launched, before the transfer on the same stream (every
  // collective and point-to-point exchange of a training iteration pays it; a bare
  // collective, `dtperf collective`, does not); and, on the critical path, where no
  // transfer or compute hides it (exposed_host_s): tensor_s per gradient tensor of a
  // distributed iteration (hooks, a framework's per-tensor coordination: Horovod
  // negotiates every tensor's collective between its ranks), host_s_per_byte per byte a
  // rank hands to collectives (staging copies), and inter_host_s_per_byte more per byte
  // handed when the ranks span nodes (a host-driven transport stages every byte through
  // host memory; per byte handed, so it does not depend on the algorithm or node count).
  double launch_s = 0.0;
  double tensor_s = 0.0;
  double host_s_per_byte = 0.0;
  double inter_host_s_per_byte = 0.0;
  double compression_ratio = 1.0;       // wire bytes = bytes / ratio
  ReductionCost reduction;              // empty: reductions hide inside the copies
  std::span<const CollectiveTable> tables;  // measured tables (all_reduce, all_gather, ...), if any

  int ranks() const { return nodes * gpus_per_node; }
  /// Achieved bytes/s of all NICs of one node, per direction.
  double node_nic_bytes_per_s() const {
    const double wire = nics_per_node * nic_line_bytes_per_s * transport_efficiency;
    return host_bytes_per_s > 0.0 ? 1.0 / (1.0 / wire + 1.0 / host_bytes_per_s) : wire;
  }
  /// Host-driven transports spend CPU time on every byte: 1 / host seconds per byte, on
  /// the cores the framework's compute (kernel launches, Python) runs on; 0 for RDMA
  /// transports. Beside compute on the host, a transfer's CPU time slows both
  /// (contention.hpp). [NET] measured compute 97 -> 109-110 ms per iteration once
  /// ResNet-50 trained across p3dn nodes over TCP. A measured CPU time per byte (per core
  /// of the machine) replaces 1 / host (the stack's work spread over several cores does
  /// not cap the rate, but still takes cores).
  double host_cpu_s_per_byte_sent() const {
    if (host_cpu_s_per_byte > 0.0) return host_cpu_s_per_byte;
    return host_bytes_per_s > 0.0 ? 1.0 / host_bytes_per_s : 0.0;
  }
  /// Most one rank can push across nodes: a GPU uses the NICs of its own rail
  /// (K/G of them when K >= G), or a whole NIC when NICs are fewer than GPUs.
  double rank_nic_cap_bytes_per_s() const;
};

/// Where a group of ranks sits, and how many ranks of each of its nodes cross nodes
/// at the same moment in total (this group's and others'), which share the NICs.
struct GroupShape {
  int nodes = 1;
  int ranks_per_node = 1;
  int crossing_ranks_per_node = 0;  // 0 means: only this group's ranks cross
  int ranks() const { return nodes * ranks_per_node; }
};

/// The cost of one collective call, with the bytes it moves on each link level.
struct CollectiveCost {
  double time_s = 0.0;
  Algorithm algorithm = Algorithm::ring;
  double intra_bytes_per_rank = 0.0;  // sent over intra-node links, per rank (average)
  double inter_bytes_per_node = 0.0;  // sent through one node's NICs, per direction
  double launch_s = 0.0;  // of time_s: the framework's host work before the transfer
};

/// Hops that cross nodes on the slowest chunk's path through a ring of `nodes` x
/// `ranks_per_node` ranks, for a chunk that makes `steps` consecutive hops (2(p - 1) in an
/// all-reduce: reduce-scatter, then all-gather; p - 1 in an all-gather). The ring visits
/// a node's r ranks one after another, so every r-th hop leaves a node, and the collective
/// ends when the chunk whose window holds the most exits arrives: ceil(steps / r). Each
/// step waits for the one before it on the chunk's path, so each such hop pays the
/// inter-node latency. With one rank per node this is NCCL's count, 2(m - 1) for an
/// all-reduce; with r >= 2 NCCL's tuning model still counts 2(m - 1), which no chunk
/// achieves: each crosses 2m - 1 (r = 2) or 2m times. (gloo's ring is not pipelined this
/// way: ring_step_latency_s.)
int ring_node_crossings(int nodes, int ranks_per_node, int steps);

/// Latency of `steps` consecutive ring steps over a group of `nodes` x `ranks_per_node`:
/// with NCCL's pipelined chunks the hops inside a node pay the intra-node latency and
/// the ring_node_crossings ones the inter-node latency; on a lockstep ring
/// (NetworkParams::lockstep_ring) every step pays the slowest hop's.
///
/// Lockstep is gloo's ring: a segment leaves only once the receiver has said it is ready
/// (its TCP pair's NOTIFY_RECV_READY, then the data: two one-way delays), and each rank
/// keeps two segments in flight, waiting on both neighbours, so the ranks advance
/// together; a max-plus recursion of those waits on 2 nodes x 2 ranks gives 12 delays for
/// an all-reduce's 6 steps, as on 4 x 1. A process group runs two collectives at once
/// (its 2 threads), which overlaps their latencies: back to back, each costs half its
/// latency alone, one delay per step. Measured (validation/gloo_collectives.py, 1 Gbit/s,
/// 2.06 ms one way, 1 MiB all-reduces, five back to back): 13.0, 23.7 and 25.4 ms each
/// on 2 x 1, 2 x 2 and 4 x 1 nodes x ranks; one delay per step plus the transfer gives
/// 12.6, 25.1 and 25.1, where NCCL's count (3 crossings on 2 x 2) gives 12.6, 19.0 and
/// 25.1. (Alone, a 4 KiB all-reduce took 4.1, 10.2 and 14.3-16.4 delays: the two per
/// step that the overlap halves.) What dtperf does not model is that overlap itself: it
/// serves a stream's collectives one at a time. So DDP on gloo, whose buckets are in flight
/// two at a time, comes out too sensitive to latency: on the validation harness's 2 nodes
/// x 2 ranks at 1 Gbit/s (4 buckets), 2 ms of delay added 28-31 ms per iteration in three
/// full grids, 44-47 ms by this rule and 22-24 ms by NCCL's count; to the decentralized
/// run whose every other step is a 4-rank all-reduce (AER) it added 2-6 ms, 4-6 ms by this
/// rule and -1 to 3 ms by NCCL's count. Those grids' 132 runs re-predicted with this rule:
/// runs over 10 % off 2, 2 and 4 -> 1, 1 and 2 (All-Reduce and AER at 2 x 2, 1 Gbit/s,
/// 2 ms: -10 ... -11 % -> +8 % and -7 ... -10 % -> -1 ... -4 %; left: AER on 4 x 1 at
/// 100 Mbit/s, gossip.hpp), medians 3.1, 3.1, 3.6 -> 3.7, 3.1, 4.0 %.
double ring_step_latency_s(const NetworkParams& net, int nodes, int ranks_per_node, int steps);

/// The 2(p - 1) steps of a ring all-reduce on `nodes` x `ranks_per_node` ranks: those
/// inside a node and those across nodes (ring_node_crossings). Its latency is
/// intra x intra_latency + inter x inter_latency; the fit inverts that formula.
struct RingSteps {
  int intra = 0;
  int inter = 0;
};
RingSteps allreduce_ring_steps(int nodes, int ranks_per_node);

/// All-reduce of `bytes` over the group. `Algorithm::automatic` picks ring or tree the
/// way NCCL's tuner does (by NCCL's own cost model: the tree for latency-bound sizes on
/// several nodes, the ring otherwise); hierarchical is used only when asked for.
CollectiveCost allreduce_cost(const NetworkParams& net, const GroupShape& group,
                              double bytes, Algorithm algorithm);

/// Concurrent exchange of `bytes` between the two ranks of a pair, both directions
/// at once (send/recv), for directed gossip (SGP push).
/// The collectives nccl-tests measures, for `dtperf collective`.
enum class Collective : std::uint8_t { all_reduce, all_gather, reduce_scatter, alltoall, sendrecv, broadcast };
template <>
struct EnumNames<Collective> {
  static constexpr Named<Collective> table[] = {
      {Collective::all_reduce, "all_reduce"},
      {Collective::all_gather, "all_gather"},
      {Collective::reduce_scatter, "reduce_scatter"},
      {Collective::alltoall, "alltoall"},
      {Collective::sendrecv, "sendrecv"},
      {Collective::broadcast, "broadcast"},
  };
};

/// A training framework's host work per iteration that nothing hides (NetworkParams::
/// tensor_s, host_s_per_byte, inter_host_s_per_byte): `tensors` gradient tensors
/// synchronised and `handed_bytes` handed to collectives by a rank. Bytes handed count
/// what the framework gives its collectives per iteration before any compression: the
/// gradient buckets of All-Reduce, the parameter buckets a gossip step exchanges, each
/// sharded unit's gathered parameters and scattered gradients once, a local-SGD
/// fragment's parameters.
inline double exposed_host_s(const NetworkParams& net, double tensors, double handed_bytes) {
  return net.tensor_s * tensors + net.host_s_per_byte * handed_bytes +
         (net.nodes > 1 ? net.inter_host_s_per_byte * handed_bytes : 0.0);
}

/// One collective on the group, where `bytes` is nccl-tests' size column: the buffer of
/// all_reduce and broadcast, the whole (all ranks') output of all_gather and input of
/// reduce_scatter and alltoall, the message of sendrecv. Ring algorithms as NCCL runs
/// them (all_reduce: `algorithm`, as allreduce_cost), with n = ranks, S = bytes:
///   all_gather      (n-1) steps of S/n: each rank sends (n-1)/n S;
///   reduce_scatter  the same traffic, and (n-1) reductions of S/n;
///   alltoall        each rank sends S/n to every other rank: (n-1)/n S, of which
///                   (n-r)/n S leave the node, through the NICs its r ranks share;
///   broadcast       a pipelined chain: every rank but the root receives S, one hop of
///                   latency per rank;
///   sendrecv        every rank sends S to the next (nccl-tests' ring): one hop, across
///                   nodes at the NIC share of the one rank per node that crosses.
/// Multi-node rings leave each node once per channel (as allreduce_cost's ring).
CollectiveCost collective_cost(const NetworkParams& net, const GroupShape& group, Collective collective,
                               double bytes, Algorithm algorithm = Algorithm::automatic);

CollectiveCost pair_send_cost(const NetworkParams& net, const GroupShape& pair, double bytes);

}  // namespace dtperf
